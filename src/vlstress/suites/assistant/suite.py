"""Multiple-choice questions to LLaVA-style assistants (the holistic CLIP paper's encoder
interaction study, ImageNet-D's VQA protocol): each image's options are its true class and the
classes a named classifier confused it with most; assistants answer by generation (parsed
strictly), every classifier of the registry by its zero-shot scores among the same options."""

from vlstress.report.display import Headline, Task
from vlstress.suites.assistant.paths import ANSWERS, CHOICES, OPTIONS
from vlstress.workflow.paths import CARD, CLASSIFIERS, ZEROSHOT_EMB
from vlstress.workflow.spec import Axis, Output, Stage, Suite
from vlstress.workflow.stages import figures_stage, outcomes_of, small, tables_stage

TESTSET = "data/testsets/{asked}"
OPTIONS_FROM = "results/embeddings/{p.assistant.options_from}"

SUITE = Suite(
    "assistant",
    "multiple-choice questions to LLaVA-style assistants among the true class and a classifier's "
    "top confusions, beside every classifier's choice among the same options",
    needs=("assistant",),
    requires=("zeroshot",),
    axes=(Axis("asked", "assistant.testsets", r"[a-z0-9][a-z0-9_]*"),),
    stages=(
        Stage(
            "assistant_options",
            "vlstress assistant-options --testset {in.testset}"
            " --image-emb {in.emb}/testsets/{asked}.npy --classifier {in.classifiers}/{asked}.npy"
            " --options {p.assistant.options} --format {p.assistant.format}"
            " --seed {p.assistant.seed} --out {out.questions}",
            inputs={
                "testset": TESTSET,
                "emb": f"{OPTIONS_FROM}/zeroshot",
                "classifiers": f"{OPTIONS_FROM}/classifiers",
            },
            outputs={"questions": Output(OPTIONS)},
            axes=("asked",),
            suite="assistant",
            doc="the questions of a test set: the true class and the options model's top "
            "confusions, in a seeded order",
        ),
        Stage(
            "ask",
            "vlstress ask --model-card {in.card} --testset {in.testset}"
            ' --questions {in.questions} --question "{p.assistant.question}"'
            " --max-new-tokens {p.assistant.max_new_tokens}"
            " --batch-size {p.assistant.batch_size} --device {p.embed.device}"
            " --threads {p.embed.threads} --precision {p.embed.precision} --out {out.record}",
            inputs={"card": CARD, "testset": TESTSET, "questions": OPTIONS},
            outputs={
                "record": small(ANSWERS, record=True),
                "replies": small(f"{ANSWERS}.json"),
                "outcomes": outcomes_of(ANSWERS),
            },
            axes=("model", "asked"),
            model_kinds=("llava",),
            suite="assistant",
            gpu=True,
            doc="an assistant's answers to a test set's questions (greedy, batched; parsed "
            "strictly, unparseable ones counted)",
        ),
        Stage(
            "choose_option",
            "vlstress choose-option --testset {in.testset}"
            " --image-emb {in.emb}/testsets/{asked}.npy --classifier {in.classifiers}/{asked}.npy"
            " --questions {in.questions} --out {out.record}",
            inputs={
                "testset": TESTSET,
                "emb": ZEROSHOT_EMB,
                "classifiers": CLASSIFIERS,
                "questions": OPTIONS,
            },
            outputs={
                "record": small(CHOICES, record=True),
                "choices": small(f"{CHOICES}.json"),
                "outcomes": outcomes_of(CHOICES),
            },
            axes=("model", "asked"),
            suite="assistant",
            doc="a classifier's choice among the same options (its highest zero-shot score)",
        ),
        figures_stage(
            "assistant", "vlstress.suites.assistant.figures", {"multiple_choice": ()}, "Figures"
        ),
        tables_stage(
            "assistant",
            "vlstress.suites.assistant.table",
            {
                "md": small("results/tables/assistant.md", caption="tables", category="Tables"),
                "tex": small("results/tables/assistant.tex", caption="tables", category="Tables"),
            },
        ),
    ),
    commands={
        "assistant-options": (
            "vlstress.suites.assistant.commands.assistant_options",
            "the multiple-choice questions of a test set (true class + a classifier's top "
            "confusions)",
        ),
        "ask": (
            "vlstress.suites.assistant.commands.ask",
            "an assistant's (LLaVA's) answers to a test set's multiple-choice questions",
        ),
        "choose-option": (
            "vlstress.suites.assistant.commands.choose_option",
            "a classifier's choice among the options of a test set's multiple-choice questions",
        ),
    },
    params="vlstress.suites.assistant.params",
    pricing="vlstress.suites.assistant.pricing",
    tasks={
        "multiple_choice": Task(
            "multiple-choice questions (assistant vs classifiers)",
            (),
            noun="test sets",
            # an assistant and a classifier on the same questions: McNemar
            headlines=(
                Headline("accuracy", "accuracy (%)", proportion=True, item_column="correct"),
            ),
        )
    },
)
