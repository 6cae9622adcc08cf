# Thin entry point: config is params.yaml (shared with DVC), validated against
# the schema; each step is one rule in workflow/rules/ calling one `vlstress`
# subcommand with the same flags as the matching stage of dvc.yaml.

from snakemake.utils import min_version, validate

min_version("8.0")


configfile: "params.yaml"


validate(config, "workflow/schemas/config.schema.yaml")


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/embed.smk"
include: "workflow/rules/evaluate.smk"
include: "workflow/rules/image.smk"
include: "workflow/rules/text.smk"
include: "workflow/rules/report.smk"


rule all:
    default_target: True
    input:
        all_outputs(),


onsuccess:
    record_in_dvc_lock()
