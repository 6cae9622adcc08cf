rule download:
    input:
        code=[f"{SRC}/commands/download.py", f"{SRC}/datasets"],
    output:
        directory(RAW),
    log:
        "logs/download.log",
    benchmark:
        "logs/benchmarks/download.tsv"
    conda:
        "../../environment.yml"
    params:
        name=DATASET["name"],
        kind=DATASET["kind"],
        max_images=flag(DATASET["max_images"]),
        images=flag(DATASET["images"]),
        captions=flag(DATASET["captions"]),
    shell:
        "vlstress download --dataset {params.name} --kind {params.kind}"
        " --max-images {params.max_images} --images {params.images}"
        " --captions {params.captions} --out {output} > {log} 2>&1"


rule prepare:
    input:
        raw=RAW,
        code=[f"{SRC}/commands/prepare.py", f"{SRC}/manifest.py"],
    output:
        MANIFEST,
    log:
        "logs/prepare.log",
    benchmark:
        "logs/benchmarks/prepare.tsv"
    conda:
        "../../environment.yml"
    params:
        name=DATASET["name"],
    shell:
        "vlstress prepare --dataset {params.name} --raw {input.raw}"
        " --out {output} > {log} 2>&1"
