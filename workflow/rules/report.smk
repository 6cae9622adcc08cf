rule plot:
    input:
        summary="results/summary.csv",
        code=[f"{SRC}/commands/plot.py", f"{SRC}/figures.py"],
    output:
        png=report(
            "results/figures/recall.png",
            caption="../report/recall.rst",
            category="Retrieval",
        ),
        pdf="results/figures/recall.pdf",
    conda:
        "../../environment.yml"
    log:
        "logs/plot.log",
    benchmark:
        "logs/benchmarks/plot.tsv"
    shell:
        "vlstress plot --summary {input.summary} --evaluation original"
        " --out {output.png} > {log} 2>&1"
