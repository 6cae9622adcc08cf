EMBED_CODE = [f"{SRC}/encoders.py", f"{SRC}/models.py"]
EMBED = config["embed"]


rule embed_images:
    input:
        manifest=MANIFEST,
        code=[f"{SRC}/commands/embed_images.py", *EMBED_CODE],
    output:
        emb=f"{EMB}/images.npy",
        meta=f"{EMB}/images.npy.json",
    log:
        "logs/embed_images/{model}.log",
    benchmark:
        "logs/benchmarks/embed_images/{model}.tsv"
    conda:
        "../../environment.yml"
    resources:
        gpu=1,
    params:
        arch=model_flag("arch"),
        pretrained=model_flag("pretrained"),
        seed=config["seed"],
        cache_dir=EMBED["cache_dir"],
        device=EMBED["device"],
        batch_size=EMBED["batch_size"],
    shell:
        "vlstress embed-images --manifest {input.manifest} --model {wildcards.model}"
        " --arch {params.arch} --pretrained {params.pretrained} --seed {params.seed}"
        " --cache-dir {params.cache_dir} --device {params.device}"
        " --batch-size {params.batch_size} --out {output.emb} > {log} 2>&1"


rule embed_texts:
    input:
        captions=MANIFEST,
        code=[f"{SRC}/commands/embed_texts.py", *EMBED_CODE],
    output:
        emb=f"{EMB}/texts.npy",
        meta=f"{EMB}/texts.npy.json",
    log:
        "logs/embed_texts/{model}.log",
    benchmark:
        "logs/benchmarks/embed_texts/{model}.tsv"
    conda:
        "../../environment.yml"
    resources:
        gpu=1,
    params:
        arch=model_flag("arch"),
        pretrained=model_flag("pretrained"),
        seed=config["seed"],
        cache_dir=EMBED["cache_dir"],
        device=EMBED["device"],
        batch_size=EMBED["batch_size"],
    shell:
        "vlstress embed-texts --captions {input.captions} --model {wildcards.model}"
        " --arch {params.arch} --pretrained {params.pretrained} --seed {params.seed}"
        " --cache-dir {params.cache_dir} --device {params.device}"
        " --batch-size {params.batch_size} --out {output.emb} > {log} 2>&1"
