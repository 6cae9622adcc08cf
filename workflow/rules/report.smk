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
    log:
        "logs/plot.log",
    benchmark:
        "logs/benchmarks/plot.tsv"
    conda:
        "../../environment.yml"
    shell:
        "vlstress plot --summary {input.summary} --evaluation original"
        " --out {output.png} > {log} 2>&1"
