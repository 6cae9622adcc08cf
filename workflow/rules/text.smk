# Text stress-tests (docs/text-variants.md, docs/text-metrics.md): the twins of the
# nlp_data, ei_scores, text_variants, embed_text_variants, evaluate_text and
# text_stats stages of dvc.yaml (DVC foreach/matrix over sets [x models]; here
# wildcards + expand).

EI = config["ei"]
TEXT = config["text_variants"]
TEXT_SETS = sorted(TEXT["sets"])
NLTK_DATA = TEXT["nltk_data"]
EI_SCORES = "results/text/ei_scores.json"
TEXT_SET = "data/text_variants/{tset}.json"
TEXT_SET_EMB = f"{EMB}/text_{{tset}}.npy"
EVALUATIONS += expand("text-{tset}", tset=TEXT_SETS)
TEXT_CODE = [
    f"{SRC}/text/variants.py",
    f"{SRC}/text/concepts.py",
    f"{SRC}/text/nlp.py",
    f"{SRC}/text/words.py",
    f"{SRC}/data/vocabulary.tsv",
]


wildcard_constraints:
    tset="|".join(TEXT_SETS),


rule nlp_data:
    input:
        code=[f"{SRC}/commands/nlp_data.py", f"{SRC}/text/nlp.py"],
    output:
        directory(NLTK_DATA),
    log:
        "logs/nlp_data.log",
    benchmark:
        "logs/benchmarks/nlp_data.tsv"
    conda:
        "../../environment.yml"
    shell:
        "vlstress nlp-data --out {output} > {log} 2>&1"


rule ei_scores:
    input:
        manifest=MANIFEST,
        code=[
            f"{SRC}/commands/ei_scores.py",
            f"{SRC}/text/ei.py",
            f"{SRC}/text/words.py",
            *EMBED_CODE,
        ],
    output:
        EI_SCORES,
    log:
        "logs/ei_scores.log",
    benchmark:
        "logs/benchmarks/ei_scores.tsv"
    conda:
        "../../environment.yml"
    resources:
        gpu=1,
    params:
        slug=EI["scorer"]["slug"],
        arch=EI["scorer"]["arch"],
        pretrained=flag(EI["scorer"]["pretrained"]),
        seed=config["seed"],
        cache_dir=EMBED["cache_dir"],
        device=EMBED["device"],
        batch_size=EMBED["batch_size"],
        block_size=EI["block_size"],
    shell:
        "vlstress ei-scores --manifest {input.manifest} --model {params.slug}"
        " --arch {params.arch} --pretrained {params.pretrained} --seed {params.seed}"
        " --cache-dir {params.cache_dir} --device {params.device}"
        " --batch-size {params.batch_size} --block-size {params.block_size}"
        " --out {output} > {log} 2>&1"


rule text_variants:
    input:
        manifest=MANIFEST,
        ei=EI_SCORES,
        raw=RAW,
        nltk_data=NLTK_DATA,
        code=[f"{SRC}/commands/text_variants.py", *TEXT_CODE],
    output:
        variants=TEXT_SET,
        meta=f"{TEXT_SET}.json",
    log:
        "logs/text_variants/{tset}.log",
    benchmark:
        "logs/benchmarks/text_variants/{tset}.tsv"
    conda:
        "../../environment.yml"
    params:
        kind=lambda wildcards: flag(TEXT["sets"][wildcards.tset]["kind"]),
        seed=lambda wildcards: flag(TEXT["sets"][wildcards.tset]["seed"]),
        words=lambda wildcards: flag(TEXT["sets"][wildcards.tset]["words"]),
        strategy=TEXT["strategy"],
        strategy_seed=TEXT["strategy_seed"],
        pool=TEXT["pool"],
        source=TEXT["source"],
        official_dir=flag(TEXT["official_dir"]),
    shell:
        "vlstress text-variants --manifest {input.manifest} --ei-scores {input.ei}"
        " --set {wildcards.tset} --kind {params.kind} --seed {params.seed}"
        " --words {params.words} --strategy {params.strategy}"
        " --strategy-seed {params.strategy_seed} --pool {params.pool}"
        " --source {params.source} --official-dir {params.official_dir}"
        " --raw {input.raw} --nltk-data {input.nltk_data}"
        " --out {output.variants} > {log} 2>&1"


rule embed_text_variants:
    input:
        captions=TEXT_SET,
        reference=f"{EMB}/texts.npy",
        reference_meta=f"{EMB}/texts.npy.json",
        code=[
            f"{SRC}/commands/embed_text_variant.py",
            f"{SRC}/commands/embed_texts.py",
            *EMBED_CODE,
        ],
    output:
        emb=TEXT_SET_EMB,
        meta=f"{TEXT_SET_EMB}.json",
    log:
        "logs/embed_text_variants/{model}/{tset}.log",
    benchmark:
        "logs/benchmarks/embed_text_variants/{model}/{tset}.tsv"
    conda:
        "../../environment.yml"
    resources:
        gpu=1,
    params:
        device=EMBED["device"],
        batch_size=EMBED["batch_size"],
    shell:
        "vlstress embed-text-variant --captions {input.captions}"
        " --model-from {input.reference} --device {params.device}"
        " --batch-size {params.batch_size} --out {output.emb} > {log} 2>&1"


rule evaluate_text:
    input:
        manifest=MANIFEST,
        image_emb=f"{EMB}/images.npy",
        original_emb=f"{EMB}/texts.npy",
        variant_captions=TEXT_SET,
        variant_emb=TEXT_SET_EMB,
        code=[
            f"{SRC}/commands/evaluate_text.py",
            f"{SRC}/commands/evaluate.py",
            f"{SRC}/metrics.py",
        ],
    output:
        "results/metrics/{model}/text-{tset}.json",
    log:
        "logs/evaluate_text/{model}/text-{tset}.log",
    benchmark:
        "logs/benchmarks/evaluate_text/{model}/text-{tset}.tsv"
    conda:
        "../../environment.yml"
    params:
        ks=config["evaluate"]["ks"],
        chunk_size=config["evaluate"]["chunk_size"],
    shell:
        "vlstress evaluate-text --manifest {input.manifest} --image-emb {input.image_emb}"
        " --original-emb {input.original_emb}"
        " --variant-captions {input.variant_captions}"
        " --variant-emb {input.variant_emb} --set {wildcards.tset} --ks {params.ks}"
        " --chunk-size {params.chunk_size} --out {output} > {log} 2>&1"


rule text_stats:
    input:
        manifest=MANIFEST,
        variants=expand(TEXT_SET, tset=TEXT_SETS),
        raw=RAW,
        nltk_data=NLTK_DATA,
        code=[
            f"{SRC}/commands/text_stats.py",
            f"{SRC}/text/stats.py",
            *TEXT_CODE,
            *EMBED_CODE,
        ],
    output:
        json=TEXT_STATS["json"],
        csv=TEXT_STATS["csv"],
        md=TEXT_STATS["md"],
        png=report(
            TEXT_STATS["png"],
            caption="../report/text_stats.rst",
            category="Text stress-tests",
        ),
        pdf=TEXT_STATS["pdf"],
    log:
        "logs/text_stats.log",
    benchmark:
        "logs/benchmarks/text_stats.tsv"
    conda:
        "../../environment.yml"
    params:
        variants_dir=lambda wildcards, input: os.path.dirname(input.variants[0]),
        source=TEXT["source"],
        official_dir=flag(TEXT["official_dir"]),
        slug=EI["scorer"]["slug"],
        arch=EI["scorer"]["arch"],
        pretrained=flag(EI["scorer"]["pretrained"]),
        seed=config["seed"],
        cache_dir=EMBED["cache_dir"],
        device=EMBED["device"],
        batch_size=EMBED["batch_size"],
    shell:
        "vlstress text-stats --manifest {input.manifest}"
        " --variants-dir {params.variants_dir} --source {params.source}"
        " --official-dir {params.official_dir} --raw {input.raw}"
        " --nltk-data {input.nltk_data} --model {params.slug} --arch {params.arch}"
        " --pretrained {params.pretrained} --seed {params.seed}"
        " --cache-dir {params.cache_dir} --device {params.device}"
        " --batch-size {params.batch_size} --out {output.json}"
        " --out-csv {output.csv} --out-md {output.md}"
        " --out-fig {output.png} > {log} 2>&1"
