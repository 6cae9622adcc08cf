rule download:
    input:
        code=[
            f"{SRC}/commands/download.py",
            f"{SRC}/datasets",
            f"{SRC}/download.py",
            f"{SRC}/data/karpathy_sources.json",
        ],
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
        image_ids=flag(DATASET.get("image_ids")),
        coco_url=flag(DATASET.get("coco_url")),
        karpathy_url=flag(DATASET.get("karpathy_url")),
        rococo_url=flag(DATASET.get("rococo_url")),
    shell:
        "vlstress download --dataset {params.name} --kind {params.kind}"
        " --max-images {params.max_images} --images {params.images}"
        " --captions {params.captions} --image-ids {params.image_ids}"
        " --coco-url {params.coco_url} --karpathy-url {params.karpathy_url}"
        " --rococo-url {params.rococo_url} --out {output} > {log} 2>&1"


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
