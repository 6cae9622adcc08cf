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
        metrics=lambda wildcards: metric_records(),
        code=[f"{SRC}/commands/summarize.py", f"{SRC}/report/records.py"],
    output:
        csv=SUMMARY["csv"],
        csv_meta=f"{SUMMARY['csv']}.json",
        agg=report(SUMMARY["agg"], caption="../report/summary.rst", category="Tables"),
        agg_meta=f"{SUMMARY['agg']}.json",
        md=SUMMARY["md"],
        json=SUMMARY["json"],
        json_meta=f"{SUMMARY['json']}.json",
        plot=SUMMARY["plot"],
        plot_meta=f"{SUMMARY['plot']}.json",
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
        " --out-agg {output.agg} --out-md {output.md} --out-json {output.json}"
        " --out-plot {output.plot} > {log} 2>&1"
