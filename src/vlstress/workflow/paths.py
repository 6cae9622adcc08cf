"""Where the workflow keeps things: path templates and flag strings that stages of several suites
share (placeholders as in `vlstress.workflow.spec`). Constants only, so that a step's code may
read them without depending on any stage declaration."""

RAW = "data/raw/{p.dataset.name}"
MANIFEST = "data/prepared/manifest.json"
CHECKED = "results/params.checked"
SUMMARY = "results/summary.csv"
SUMMARY_AGG = "results/summary_agg.csv"
CARD = "results/models/{model}.json"
CARD_FLAGS = "--seed {p.seed} --cache-dir {p.embed.cache_dir}"
RUN_FLAGS = (
    "--device {p.embed.device} --batch-size {p.embed.batch_size}"
    " --cuda-batch-size {p.embed.cuda_batch_size}"
    " --threads {p.embed.threads} --workers {p.embed.workers} --precision {p.embed.precision}"
    " --decoder {p.embed.decoder}"
)
REUSE_FLAG = "--reuse-dir {p.embed.cache_dir}/embeddings"
EVALUATE_FLAGS = (
    "--ks {p.evaluate.ks} --chunk-size {p.evaluate.chunk_size} --ties {p.evaluate.ties}"
)
METRICS = "results/metrics/{model}"
FIGURES = "results/figures"

# the embeddings of a model: one folder per embedding job
EMB = "results/embeddings/{model}"
RETRIEVAL_EMB = f"{EMB}/retrieval"  # every retrieval set (embed_retrieval)
CLASSIFIERS = (
    f"{EMB}/classifiers"  # the zero-shot classifier of each test set (zeroshot_classifiers)
)
ZEROSHOT_EMB = f"{EMB}/zeroshot"  # every zero-shot image set (embed_zeroshot)
# with `cluster.embed_shards` > 1: the shard folders the join makes ZEROSHOT_EMB of
SHARDS = "cluster.embed_shards"
ZEROSHOT_SHARDS = f"{EMB}/zeroshot-shards"

# labelled test sets (the `testset` command), and files inside the two zero-shot folders
TESTSET = "data/testsets/{testset}"
CLASSIFIER = "{testset}.npy"
TESTSET_EMB = "testsets/{testset}.npy"
TESTSET_FLAGS = (
    " --kind {item.kind} --root {item.root} --annotations {item.annotations}"
    " --classnames {item.classnames}"
    " --max-per-class {item.max_per_class} --min-size {item.min_size} --label {item.label}"
    # quoted: class names may hold spaces
    ' --corruption {item.corruption} --keep "{item.keep}" --drop "{item.drop}"'
)
TESTSET_EXTERNAL = ("item.root", "item.annotations", "item.classnames")
ZEROSHOT_RECORD = "results/metrics/{model}/zeroshot-{testset}.json"


def of(template: str, testset: str) -> str:
    """A per-test-set template for the test set a param names (`{p.corruptions.testset}`...)."""
    return template.replace("{testset}", "{%s}" % testset)


def inside(folder: str, template: str, **values: object) -> str:
    """A file inside a model's folder, with the given axis values filled in."""
    return f"{folder}/" + template.format(**{name: str(value) for name, value in values.items()})
