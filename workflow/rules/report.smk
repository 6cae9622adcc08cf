# Figures and tables of the paper from the summary table. Outputs are wrapped in
# report(...) so `snakemake --report report.html` collects them with captions
# (workflow/report/*.rst). FIGURES (common.smk) = vlstress.figures.FIGURES.


rule figures:
    input:
        summary=SUMMARY["csv"],
        code=[
            f"{SRC}/commands/figures.py",
            f"{SRC}/figures.py",
            f"{SRC}/report/records.py",
        ],
    output:
        png=[
            report(
                f"results/figures/{name}.png",
                caption=f"../report/{name}.rst",
                category="Figures",
            )
            for name in FIGURES
        ],
        pdf=expand("results/figures/{name}.pdf", name=FIGURES),
    log:
        "logs/figures.log",
    benchmark:
        "logs/benchmarks/figures.tsv"
    conda:
        "../../environment.yml"
    params:
        out_dir=lambda wildcards, output: os.path.dirname(output.png[0]),
    shell:
        "vlstress figures --summary {input.summary} --out-dir {params.out_dir}"
        " > {log} 2>&1"


rule tables:
    input:
        summary=SUMMARY["csv"],
        code=[
            f"{SRC}/commands/tables.py",
            f"{SRC}/report/tables.py",
            f"{SRC}/report/records.py",
        ],
    output:
        md=report(TABLES["md"], caption="../report/tables.rst", category="Tables"),
        tex=report(TABLES["tex"], caption="../report/tables.rst", category="Tables"),
    log:
        "logs/tables.log",
    benchmark:
        "logs/benchmarks/tables.tsv"
    conda:
        "../../environment.yml"
    shell:
        "vlstress tables --summary {input.summary} --out-md {output.md}"
        " --out-tex {output.tex} > {log} 2>&1"
