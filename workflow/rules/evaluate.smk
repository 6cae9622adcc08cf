rule evaluate:
    input:
        manifest=MANIFEST,
        image_emb=f"{EMB}/images.npy",
        text_emb=f"{EMB}/texts.npy",
        code=[f"{SRC}/commands/evaluate.py", f"{SRC}/metrics.py"],
    output:
        "results/metrics/{model}/original.json",
    log:
        "logs/evaluate/{model}.log",
    benchmark:
        "logs/benchmarks/evaluate/{model}.tsv"
    conda:
        "../../environment.yml"
    params:
        ks=config["evaluate"]["ks"],
        chunk_size=config["evaluate"]["chunk_size"],
    shell:
        "vlstress evaluate --manifest {input.manifest} --image-emb {input.image_emb}"
        " --text-emb {input.text_emb} --ks {params.ks} --chunk-size {params.chunk_size}"
        " --out {output} > {log} 2>&1"


rule summarize:
    input:
        metrics=expand("results/metrics/{model}/original.json", model=MODELS),
        code=f"{SRC}/commands/summarize.py",
    output:
        csv="results/summary.csv",
        md="results/summary.md",
        json="results/metrics.json",
    log:
        "logs/summarize.log",
    benchmark:
        "logs/benchmarks/summarize.tsv"
    conda:
        "../../environment.yml"
    params:
        metrics_dir=lambda wildcards, input: os.path.dirname(
            os.path.dirname(input.metrics[0])
        ),
    shell:
        "vlstress summarize --metrics-dir {params.metrics_dir} --out-csv {output.csv}"
        " --out-md {output.md} --out-json {output.json} > {log} 2>&1"
