"""RoCOCO text stress-tests: one word of each caption replaced (image → text)."""

from vlstress.embedding.kinds import IMAGE_TEXT_KINDS
from vlstress.report.display import Headline, Task
from vlstress.suites.rococo_text.paths import (
    EI_SCORES,
    NLTK_DATA,
    RECORD_NAME,
    SCORER_CARD,
    TEXT_SET,
    caption_sets,
    folders,
    shaping_params,
)
from vlstress.workflow.paths import (
    CARD_FLAGS,
    CHECKED,
    EVALUATE_FLAGS,
    MANIFEST,
    METRICS,
    RAW,
    RETRIEVAL_EMB,
    RUN_FLAGS,
)
from vlstress.workflow.spec import Axis, Output, PathList, Stage, Suite
from vlstress.workflow.stages import outcomes_of

SETS = PathList(caption_sets, folders, shaping_params)
TEXT_RECORD = f"{METRICS}/{RECORD_NAME}"

SUITE = Suite(
    "rococo_text",
    "RoCOCO text stress-tests: one word of each caption replaced (image → text)",
    needs=("ei", "text_variants"),
    axes=(Axis("set", "text_variants.sets", r"[a-z0-9][a-z0-9_]*", keys=True),),
    stages=(
        Stage(
            "nlp_data",
            "vlstress nlp-data --out {out.nltk_data}",
            outputs={"nltk_data": Output(NLTK_DATA, directory=True, persist=True)},
            suite="rococo_text",
            after=(CHECKED,),
        ),
        Stage(
            "scorer_card",
            "vlstress model-card --model {p.ei.scorer.slug} --arch {p.ei.scorer.arch}"
            " --pretrained {p.ei.scorer.pretrained} " + CARD_FLAGS + " --out {out.card}",
            outputs={"card": Output(SCORER_CARD)},
            external=("ei.scorer.pretrained",),
            suite="rococo_text",
            doc="the model card of the EI scorer",
            after=(CHECKED,),
        ),
        Stage(
            "ei_scores",
            "vlstress ei-scores --manifest {in.manifest} --model-card {in.card} "
            + RUN_FLAGS
            + " --block-size {p.ei.block_size} --out {out.scores}",
            inputs={"manifest": MANIFEST, "card": SCORER_CARD},
            outputs={"scores": Output(EI_SCORES)},
            suite="rococo_text",
            gpu=True,
        ),
        Stage(
            "text_variants",
            "vlstress text-variants --manifest {in.manifest} --ei-scores {in.ei} --set {set}"
            " --kind {item.kind} --seed {item.seed} --words {item.words}"
            " --strategy {p.text_variants.strategy}"
            " --strategy-seed {p.text_variants.strategy_seed} --pool {p.text_variants.pool}"
            " --source {p.text_variants.source} --official-dir {p.text_variants.official_dir}"
            " --raw {in.raw} --nltk-data {in.nltk_data} --out {out.variants}",
            inputs={"manifest": MANIFEST, "ei": EI_SCORES, "raw": RAW, "nltk_data": NLTK_DATA},
            outputs={"variants": Output(TEXT_SET), "meta": Output(f"{TEXT_SET}.json")},
            axes=("set",),
            external=("text_variants.official_dir",),
            suite="rococo_text",
        ),
        Stage(
            "evaluate_text",
            "vlstress evaluate-texts {params_files} --manifest {in.manifest} --emb {in.emb} "
            + EVALUATE_FLAGS
            + " --out-dir "
            + METRICS,
            inputs={"manifest": MANIFEST, "emb": RETRIEVAL_EMB},
            input_lists={"sets": "text_sets"},
            outputs={
                "record": Output(TEXT_RECORD, cache=False, record=True, each=("set",)),
                "outcomes": outcomes_of(TEXT_RECORD, each=("set",)),
            },
            axes=("model",),
            model_kinds=IMAGE_TEXT_KINDS,
            suite="rococo_text",
            doc="every caption set of a model, one job per model (one record per set)",
        ),
        Stage(
            "text_stats",
            "vlstress text-stats --manifest {in.manifest}"
            " --variants-dir data/text_variants {params_files} --source {p.text_variants.source}"
            " --official-dir {p.text_variants.official_dir} --raw {in.raw}"
            " --nltk-data {in.nltk_data} --model-card {in.card} "
            + RUN_FLAGS
            + " --out {out.json} --out-csv {out.csv}"
            " --out-md {out.md} --out-fig {out.png}",
            inputs={"manifest": MANIFEST, "raw": RAW, "nltk_data": NLTK_DATA, "card": SCORER_CARD},
            input_lists={"variants": "text_sets"},
            outputs={
                "json": Output("results/text/stats.json", cache=False),
                "csv": Output("results/text/stats.csv", cache=False),
                "md": Output("results/text/stats.md", cache=False),
                "png": Output(
                    "results/figures/text_stats.png",
                    caption="text_stats",
                    category="Text stress-tests",
                ),
                "pdf": Output("results/figures/text_stats.pdf"),
            },
            external=("text_variants.official_dir",),
            suite="rococo_text",
        ),
    ),
    commands={
        "ei-scores": (
            "vlstress.suites.rococo_text.commands.ei_scores",
            "embedding influence of every caption word (1 - cos with the word deleted)",
        ),
        "evaluate-text": (
            "vlstress.suites.rococo_text.commands.evaluate_text",
            "image-to-text metrics against original + altered captions",
        ),
        "evaluate-texts": (
            "vlstress.suites.rococo_text.commands.evaluate_texts",
            "image-to-text metrics of one model on every caption set (one record each)",
        ),
        "nlp-data": (
            "vlstress.suites.rococo_text.commands.nlp_data",
            "install the offline NLP resources (WordNet for nltk) into a folder",
        ),
        "text-variants": (
            "vlstress.suites.rococo_text.commands.text_variants",
            "one RoCOCO caption set (same/diff concept, rand-voca, danger; generated or official)",
        ),
        "text-stats": (
            "vlstress.suites.rococo_text.commands.text_stats",
            "statistics of the caption sets (table + figure), beside the official sets",
        ),
    },
    params="vlstress.suites.rococo_text.params",
    pricing="vlstress.suites.rococo_text.pricing",
    lists={"text_sets": SETS, "retrieval_sets": SETS},
    providers={"retrieval": "vlstress.suites.rococo_text.sets"},
    tasks={
        "text-stress": Task(
            "text stress (image → text)",
            ("i2t",),
            baseline="retrieval",
            names={
                "same_concept": "same-concept",
                "diff_concept": "diff-concept",
                "rand_voca": "rand-voca",
                "danger": "danger",
            },
            noun="text sets",
            distractor="an altered caption",
            headlines=(
                Headline("i2t_R@1", "image → text R@1 (%)", proportion=True, item_column="hit1"),
            ),
        )
    },
)
