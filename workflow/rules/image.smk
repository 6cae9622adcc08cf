# Image stress-tests (docs/image-variants.md): the twins of the image_variants,
# embed_image_variants and evaluate_image stages of dvc.yaml (DVC `matrix` over
# methods x lams x seeds [x models]; here wildcards + expand).

IMAGE = config["image_variants"]
VARIANT = "{method}_lam{lam}_seed{seed}"
VARIANT_DIR = f"data/image_variants/{VARIANT}"
VARIANT_EMB = f"{EMB}/image_variants/{VARIANT}.npy"
IMAGE_EVALUATIONS = expand(
    "image-{method}-lam{lam}-seed{seed}",
    method=IMAGE["methods"],
    lam=IMAGE["lams"],
    seed=IMAGE["seeds"],
)
EVALUATIONS += IMAGE_EVALUATIONS

VARIANT_WILDCARDS = {"method": "[a-z]+", "lam": "[0-9.]+", "seed": "[0-9]+"}


rule image_variants:
    input:
        manifest=MANIFEST,
        raw=RAW,
        code=[
            f"{SRC}/commands/image_variants.py",
            f"{SRC}/images/variants.py",
            f"{SRC}/encoders.py",
        ],
    output:
        directory(VARIANT_DIR),
    log:
        f"logs/image_variants/{VARIANT}.log",
    benchmark:
        f"logs/benchmarks/image_variants/{VARIANT}.tsv"
    wildcard_constraints:
        **VARIANT_WILDCARDS,
    conda:
        "../../environment.yml"
    params:
        mode=IMAGE["mode"],
        size=IMAGE["size"],
        jpeg_quality=IMAGE["jpeg_quality"],
    shell:
        "vlstress image-variants --manifest {input.manifest} --method {wildcards.method}"
        " --lam {wildcards.lam} --seed {wildcards.seed} --mode {params.mode}"
        " --size {params.size} --jpeg-quality {params.jpeg_quality}"
        " --out {output} > {log} 2>&1"


rule embed_image_variants:
    input:
        variant=VARIANT_DIR,
        reference=f"{EMB}/images.npy",
        reference_meta=f"{EMB}/images.npy.json",
        code=[
            f"{SRC}/commands/embed_image_variant.py",
            f"{SRC}/images/variants.py",
            *EMBED_CODE,
        ],
    output:
        emb=VARIANT_EMB,
        meta=f"{VARIANT_EMB}.json",
    log:
        f"logs/embed_image_variants/{{model}}/{VARIANT}.log",
    benchmark:
        f"logs/benchmarks/embed_image_variants/{{model}}/{VARIANT}.tsv"
    wildcard_constraints:
        **VARIANT_WILDCARDS,
    conda:
        "../../environment.yml"
    resources:
        gpu=1,
    params:
        device=EMBED["device"],
        batch_size=EMBED["batch_size"],
    shell:
        "vlstress embed-image-variant --variant {input.variant}"
        " --model-from {input.reference} --device {params.device}"
        " --batch-size {params.batch_size} --out {output.emb} > {log} 2>&1"


rule evaluate_image:
    input:
        manifest=MANIFEST,
        image_emb=f"{EMB}/images.npy",
        text_emb=f"{EMB}/texts.npy",
        variant=VARIANT_DIR,
        variant_emb=VARIANT_EMB,
        code=[
            f"{SRC}/commands/evaluate_image.py",
            f"{SRC}/commands/evaluate.py",
            f"{SRC}/images/metrics.py",
            f"{SRC}/metrics.py",
        ],
    output:
        "results/metrics/{model}/image-{method}-lam{lam}-seed{seed}.json",
    log:
        "logs/evaluate_image/{model}/image-{method}-lam{lam}-seed{seed}.log",
    benchmark:
        "logs/benchmarks/evaluate_image/{model}/image-{method}-lam{lam}-seed{seed}.tsv"
    wildcard_constraints:
        **VARIANT_WILDCARDS,
    conda:
        "../../environment.yml"
    params:
        ks=config["evaluate"]["ks"],
        chunk_size=config["evaluate"]["chunk_size"],
    shell:
        "vlstress evaluate-image --manifest {input.manifest} --image-emb {input.image_emb}"
        " --text-emb {input.text_emb} --variant {input.variant}"
        " --variant-emb {input.variant_emb} --ks {params.ks}"
        " --chunk-size {params.chunk_size} --out {output} > {log} 2>&1"
