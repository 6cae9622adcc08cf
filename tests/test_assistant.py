"""The assistant suite's parts: options drawn from a classifier's confusions, the strict reading of
an answer, the LLaVA model kind (a tiny random-init LLaVA built from a config, a saved folder,
entries refused by name) and its batched greedy generation against transformers' own."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from vlstress.embedding import llava_entries, llava_models
from vlstress.embedding.kinds import model_kind
from vlstress.errors import VlstressError
from vlstress.suites.assistant import answers, questions

pytest.importorskip("transformers")


# --------------------------------------------------------------------------- options


def test_options_are_the_true_class_and_the_top_confusions():
    scores = np.array(
        [
            [0.9, 0.1, 0.5, 0.7, 0.2],  # label 0: confusions 3 (0.7), 2 (0.5)
            [0.3, 0.1, 0.3, 0.3, 0.0],  # label 1: ties at 0.3 -> lower class first: 0, 2
        ]
    )
    options = questions.draw_options(scores, [0, 1], 3, seed=0)
    assert sorted(options[0]) == [0, 2, 3]
    assert sorted(options[1]) == [0, 1, 2]


def test_the_order_is_seeded_per_question_and_the_answer_is_the_true_class():
    rng = np.random.default_rng(1)
    scores = rng.normal(size=(40, 10))
    labels = list(rng.integers(0, 10, size=40))
    first = questions.draw_options(scores, labels, 4, seed=3)
    assert (first == questions.draw_options(scores, labels, 4, seed=3)).all()
    # a question's order does not depend on the other questions
    assert (first[5:] == questions.draw_options(scores, labels, 4, seed=3)[5:]).all()
    assert (questions.draw_options(scores[:6], labels[:6], 4, seed=3) == first[:6]).all()
    other = questions.draw_options(scores, labels, 4, seed=4)
    assert (np.sort(other, axis=1) == np.sort(first, axis=1)).all() and (other != first).any()
    # the true class lands on every letter (not always A)
    block = questions.questions_block([{"path": f"{i}.png", "label": int(y)} for i, y in
                                       enumerate(labels)], first)  # fmt: skip
    assert {item["answer"] for item in block} == set("ABCD")
    assert all(item["options"][questions.LETTERS.index(item["answer"])] == item["label"]
               for item in block)  # fmt: skip


def test_more_options_than_classes_is_refused():
    with pytest.raises(VlstressError, match="5 options need at least as many classes"):
        questions.draw_options(np.zeros((2, 4)), [0, 1], 5, seed=0)


def test_a_malformed_questions_file_is_named(tmp_path):
    path = tmp_path / "q.json"
    good = {
        "kind": questions.KIND,
        "format": "letters",
        "classes": ["a", "b", "c"],
        "n_options": 2,
        "questions": [{"path": "x.png", "label": 1, "options": [1, 2], "answer": "A"}],
    }
    path.write_text(json.dumps(good))
    assert questions.load(path)["questions"][0]["answer"] == "A"
    good["questions"][0]["answer"] = "B"  # the letter of class 2, not of the label
    path.write_text(json.dumps(good))
    with pytest.raises(VlstressError, match=r"question 0 \(x.png\) is malformed"):
        questions.load(path)


# --------------------------------------------------------------------------- answers


NAMES = ["dog", "cat", "cup of coffee", "Alpha"]


@pytest.mark.parametrize(
    "reply, chosen",
    [
        ("B", 1),
        ("B.", 1),
        (" (B) ", 1),
        ("B)", 1),
        ("B:", 1),
        ("C. cup of coffee", 2),
        ("(C) Cup of coffee.", 2),
        ("cat", 1),
        ("Cat.", 1),
        ("Alpha", 3),  # a class name that starts with a letter of the options
        ("B. dog", None),  # the letter of one option with the name of another
        ("A. Alpha", None),
        ("E", None),  # no such option
        ("AB", None),
        ("A or B", None),
        ("The answer is B", None),
        ("b", None),
        ("", None),
        ("\ufffdJ\x16", None),
    ],
)
def test_an_answer_counts_only_when_it_names_exactly_one_option(reply, chosen):
    assert answers.parse(reply, NAMES) == chosen


@pytest.mark.parametrize(
    "reply, chosen",
    [
        ("The main object in this image is a cat.", 1),
        ("Dog", 0),
        ("a camera", 2),  # ImageNet-D's synonym of "still camera"
        ("a can opener", 3),  # not also "pen", which is inside it
        ("a pen", 4),
        ("a dog and a cat", None),  # two options
        ("a bicycle", None),  # none
    ],
)
def test_strict_imagenet_d_answers_are_the_one_class_they_mention(reply, chosen):
    names = ["dog", "cat", "still camera", "can opener", "pen"]
    synonyms = {"still camera": ("camera",)}
    assert answers.parse(reply, names, "imagenet-d-strict", synonyms) == chosen


def test_the_imagenet_d_question_and_its_shipped_synonyms():
    from vlstress.testsets.labelmaps import imagenet_d_classes, imagenet_d_synonyms

    text = answers.prompt(
        "What is the main object in this image?", ["pen", "can opener"], "imagenet-d"
    )
    assert text == (
        "What is the main object in this image? Choose from the following list: pen, can opener."
    )
    synonyms = imagenet_d_synonyms()
    assert synonyms["still camera"] == ("camera",) and len(synonyms) == 32
    # keyed by the class names as the test-set kind writes them (the evaluation's `t shirt`)
    names = {name.replace("_", " ") for name, _ in imagenet_d_classes().values()}
    assert set(synonyms) <= names and synonyms["t-shirt"] == ("t-shirt", "shirt")


def test_imagenet_d_order_puts_the_truth_first():
    scores = np.array([[0.1, 0.9, 0.5], [0.8, 0.1, 0.3]])
    rows = questions.draw_options(scores, [2, 1], 2, seed=0, truth_first=True)
    assert rows.tolist() == [[2, 1], [1, 0]]


def test_the_prompt_letters_the_options_and_asks_for_the_letter():
    text = answers.prompt("What is the main object in this image?", ["dog", "cat"])
    assert text.splitlines() == [
        "What is the main object in this image?",
        "A. dog",
        "B. cat",
        answers.INSTRUCTION,
    ]


# --------------------------------------------------------------------------- the model kind


def test_llava_is_a_kind_of_its_own():
    assert model_kind("llava") == "llava" and model_kind("llava:tiny") == "llava"
    assert model_kind("timm:resnet18") == "timm" and model_kind("ViT-B-32") == "open_clip"
    assert llava_entries.weights_kind("llava-hf/llava-1.5-7b-hf") == "hub"
    assert llava_entries.weights_kind("./models/llava") == "folder"
    assert llava_entries.weights_kind(None) == "random-init"


@pytest.mark.parametrize(
    "arch, pretrained, message",
    [
        ("llava", None, "needs a hub id .* or a local folder"),
        ("llava:tiny", "llava-hf/llava-1.5-7b-hf", "is a seeded random init"),
        ("llava:huge", None, "unknown LLaVA config 'huge'"),
        ("llava", "llava-1.5-7b", "neither a local folder nor a hub id"),
        ("llava", "/nowhere/llava", "LLaVA folder not found"),
    ],
)
def test_bad_llava_entries_are_named(arch, pretrained, message):
    with pytest.raises(VlstressError, match=f"model 'm': .*{message}"):
        llava_entries.check("m", arch, pretrained)


@pytest.fixture(scope="module")
def tiny():
    return llava_models.load("t", "llava:tiny", None, seed=0, cache_dir=None, device="cpu")


@pytest.fixture(scope="module")
def saved(tiny, tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("llava") / "tiny-llava"
    model, processor = tiny
    model.save_pretrained(folder)
    processor.save_pretrained(folder)
    return folder


def test_the_random_init_is_seeded(tiny):
    import torch

    again, _ = llava_models.load("t", "llava:tiny", None, seed=0, cache_dir=None, device="cpu")
    other, _ = llava_models.load("t", "llava:tiny", None, seed=1, cache_dir=None, device="cpu")
    state = tiny[0].state_dict()
    assert all(torch.equal(state[k], v) for k, v in again.state_dict().items())
    assert any(not torch.equal(state[k], v) for k, v in other.state_dict().items())


def test_a_saved_folder_loads_the_same_weights(tiny, saved):
    import torch

    model, processor = llava_models.load(
        "f", "llava", str(saved), seed=0, cache_dir=None, device="cpu"
    )
    state = tiny[0].state_dict()
    assert all(torch.equal(state[k], v) for k, v in model.state_dict().items())
    assert processor.tokenizer.padding_side == "left"


def test_a_folder_without_its_processor_files_is_refused(saved, tmp_path):
    import shutil

    broken = tmp_path / "no-processor"
    shutil.copytree(saved, broken)
    for name in llava_entries.PROCESSOR_FILES + llava_entries.TOKENIZER_FILES:
        (broken / name).unlink(missing_ok=True)
    with pytest.raises(VlstressError, match="lacks processor files .* tokenizer files"):
        llava_entries.check("m", "llava", str(broken))


def test_the_card_pins_a_folder_and_refuses_it_edited(saved, tmp_path):
    import shutil

    from vlstress.embedding import models
    from vlstress.io import write_json

    folder = tmp_path / "copy"
    shutil.copytree(saved, folder)
    spec = models.ModelSpec("f", "llava", str(folder))
    card = models.card(spec)
    assert card["model"]["weights"] == "folder" and card["model"]["kind"] == "llava"
    assert card["model"]["folder_sha256"] == llava_entries.folder_sha256(saved)
    write_json(tmp_path / "card.json", card)
    assert models.spec_from_card(tmp_path / "card.json") == spec
    (folder / "generation_config.json").write_text("{}")
    with pytest.raises(VlstressError, match="changed since its card"):
        models.spec_from_card(tmp_path / "card.json")
    with pytest.raises(VlstressError, match="is an assistant"):
        models.load(spec, "cpu")


def _images(folder: Path, n: int) -> list[Path]:
    from PIL import Image

    paths = []
    for i in range(n):
        pixels = np.random.default_rng(i).integers(0, 255, (24 + 8 * i, 40, 3), dtype=np.uint8)
        paths.append(folder / f"{i}.png")
        Image.fromarray(pixels).save(paths[-1])
    return paths


def test_batched_answers_are_transformers_greedy_generation(tiny, tmp_path):
    """The same batch through `generate` and through transformers' own greedy decoding give the
    same tokens; the prompt is the processor's chat template around the question."""
    import torch

    from vlstress.embedding.encoders import load_rgb

    model, processor = tiny
    paths = _images(tmp_path, 3)
    texts = [answers.prompt("What?", ["dog", "cat"]), "Which one?", answers.prompt("Q", ["a"])]
    found = llava_models.generate(
        model, processor, paths, texts, batch_size=3, max_new_tokens=4, device="cpu"
    )
    prompts = [llava_models.chat_prompt(processor, t) for t in texts]
    assert prompts[1] == "USER: <image>\nWhich one? ASSISTANT:"
    batch = processor(
        images=[load_rgb(p) for p in paths], text=prompts, return_tensors="pt", padding=True
    )
    with torch.no_grad():
        out = model.generate(**batch, do_sample=False, max_new_tokens=4)
    expected = processor.tokenizer.batch_decode(
        out[:, batch["input_ids"].shape[1] :], skip_special_tokens=True
    )
    assert found == expected


def test_left_padding_leaves_a_question_unchanged(tiny, tmp_path):
    """A short prompt padded on the left beside a long one: its next-token logits are its own
    (to float rounding), so batching does not change what is asked."""
    import torch

    from vlstress.embedding.encoders import load_rgb

    model, processor = tiny
    paths = _images(tmp_path, 2)
    prompts = [llava_models.chat_prompt(processor, t) for t in ("Short?", "A much longer one?" * 4)]
    images = [load_rgb(p) for p in paths]
    with torch.no_grad():
        alone = model(**processor(images=images[:1], text=prompts[:1], return_tensors="pt")).logits
        both = processor(images=images, text=prompts, return_tensors="pt", padding=True)
        assert both["attention_mask"][0, 0] == 0  # padded on the left
        padded = model(**both).logits
    torch.testing.assert_close(padded[0, -1], alone[0, -1], atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize(
    "form, replies",
    [
        # right (A = dog), right by name (cat), wrong (A = cow), unparseable
        ("letters", ["A", "cat", "A", "I think a dog"]),
        # ImageNet-D's question: the class the answer mentions (a dog and a cat: two, unparseable)
        ("imagenet-d", ["It is a dog.", "cat", "a dog", "a dog and a cat"]),
        ("imagenet-d-strict", ["It is a dog.", "cat", "a dog", "a dog and a cat"]),
    ],
)
def test_the_record_counts_right_wrong_and_unparseable(monkeypatch, tmp_path, form, replies):
    """`ask` end to end with the replies scripted: accuracy and the unparseable share are counts of
    the parsed replies, and the sidecar shows each one."""
    from vlstress.embedding import models
    from vlstress.io import write_json
    from vlstress.suites.assistant import run
    from vlstress.testsets import manifest

    root = tmp_path / "images"
    root.mkdir()
    paths = _images(root, 4)
    data = manifest.ClassificationSet(
        dataset="toy",
        kind="imagefolder",
        classes=["dog", "cat", "cow"],
        class_ids=["d", "c", "w"],
        root=str(root),
        images=[{"path": p.name, "label": i % 3} for i, p in enumerate(paths)],
    )
    (tmp_path / "set").mkdir()
    manifest.write(tmp_path / "set" / manifest.MANIFEST_NAME, data)
    options = np.array([[0, 1], [2, 1], [0, 2], [1, 0]])  # true classes 0, 1, 2, 0
    asked = {
        "kind": questions.KIND,
        "format": form,
        "testset": "toy",
        "classes": data.classes,
        "root": str(root),
        "n_options": 2,
        "seed": 0,
        "options_from": {"slug": "clip"},
        "questions": questions.questions_block(data.images, options),
    }
    write_json(tmp_path / "q.json", asked)
    write_json(tmp_path / "card.json", models.card(models.ModelSpec("t", "llava:tiny", None)))
    monkeypatch.setattr(llava_models, "generate", lambda *a, **k: replies)
    record, sidecar, outcomes = run.ask(
        tmp_path / "card.json",
        tmp_path / "set",
        tmp_path / "q.json",
        question="What?",
        max_new_tokens=4,
        batch_size=2,
        device="cpu",
        threads=1,
        precision="fp32",
    )
    assert record.task == "multiple_choice"
    assert record.condition == {"options": 2, "options_from": "clip", "format": form}
    assert record.metrics == {
        "accuracy": 50.0,
        "accuracy_answered": pytest.approx(200 / 3),  # 2 right of the 3 that name an option
        "unparseable": 25.0,
        "n_questions": 4,
        "n_correct": 2,
        "n_unparseable": 1,
    }
    assert [q["chosen"] for q in sidecar["questions"]] == ["A", "B", "A", None]
    assert [q["correct"] for q in sidecar["questions"]] == [True, True, False, False]
    # per question, as the record counts: right, and naming one option
    assert outcomes.unit == "question"
    assert outcomes.column("correct").tolist() == [True, True, False, False]
    assert outcomes.column("answered").tolist() == [True, True, True, False]
    assert 100 * outcomes.column("correct").mean() == record.metrics["accuracy"]
    assert record.provenance["model"]["kind"] == "llava"
    assert record.provenance["params"]["decoding"] == "greedy"


# --------------------------------------------------------------------------- table and figure


def _summary(counts: dict[str, tuple[str, int, int, int]], n: int = 30):
    """A summary of multiple-choice records: label -> (arch, right, unparseable, questions)."""
    import pandas as pd

    condition = {"format": "letters", "options_from": "rn50-openai", "options": 4}
    rows = []
    for label, (arch, right, lost, asked) in counts.items():
        metrics = {
            "accuracy": 100.0 * right / asked,
            "unparseable": 100.0 * lost / asked,
            "n_questions": asked,
        }
        for metric, value in metrics.items():
            rows.append(
                {
                    "model": label,
                    "label": label,
                    "arch": arch,
                    "weights": "w",
                    "weights_kind": "random-init",
                    "n_params": np.nan,
                    "dataset": "objects",
                    "n_images": n,
                    "task": "multiple_choice",
                    "condition": "c",
                    "condition_label": "c",
                    "condition_json": json.dumps(condition),
                    "seed": np.nan,
                    "metric": metric,
                    "value": value,
                }  # fmt: skip
            )
    return pd.DataFrame(rows)


def test_the_table_gives_wilson_intervals_over_the_questions():
    """Known counts: each cell is statsmodels' Wilson interval of right (unparseable) answers over
    the questions, and n is a column; a classifier has no unparseable share."""
    from statsmodels.stats.proportion import proportion_confint

    from vlstress.report import records
    from vlstress.suites.assistant import table

    summary = _summary({"llava:tiny": ("llava:tiny", 7, 4, 25), "RN50": ("RN50", 12, 0, 25)})
    caption, frame = table.multiple_choice_table(records.aggregate(summary))
    assert "95% Wilson interval over the n questions" in caption
    assert list(frame.columns) == ["kind", "objects n", "objects accuracy", "objects unparseable"]
    lo, hi = proportion_confint(7, 25, method="wilson")
    assert frame.loc["llava:tiny", "objects accuracy"] == f"28.0 [{100 * lo:.1f}, {100 * hi:.1f}]"
    lo, hi = proportion_confint(4, 25, method="wilson")
    assert (
        frame.loc["llava:tiny", "objects unparseable"] == f"16.0 [{100 * lo:.1f}, {100 * hi:.1f}]"
    )
    assert (
        frame.loc["RN50", "objects n"] == "25" and frame.loc["RN50", "objects unparseable"] == "–"
    )


def test_the_figure_draws_the_accuracy_interval_and_names_n():
    """One error bar per model at its accuracy, spanning statsmodels' Wilson interval over its
    questions; n in the panel title and the notes."""
    from statsmodels.stats.proportion import proportion_confint

    from vlstress.report import figures as common
    from vlstress.suites.assistant import figures

    common.setup()
    summary = _summary({"llava:tiny": ("llava:tiny", 0, 30, 30), "RN50": ("RN50", 9, 0, 30)})
    fig, notes = figures.multiple_choice(summary)
    ax = fig.axes[0]
    assert ax.get_title() == "objects (n = 30 questions)"
    assert notes[0].startswith("n = 30 questions a test set") and "Wilson" in notes[1]
    (bars,) = [c for c in ax.containers if type(c).__name__ == "ErrorbarContainer"]
    segments = bars.lines[2][0].get_segments()  # one horizontal segment per model, in y order
    spans = [(round(s[0][0], 6), round(s[1][0], 6)) for s in segments]
    expected = [proportion_confint(k, 30, method="wilson") for k in (0, 9)]
    assert spans == [(round(100 * lo, 6), round(100 * hi, 6)) for lo, hi in expected]


def test_an_assistant_and_a_classifier_are_compared_on_the_same_questions():
    """The headline's per-question outcome pairs two answerers of the same questions (McNemar on
    the discordant ones); questions about other images are not paired."""
    import numpy as np

    from vlstress.outcomes import Outcomes
    from vlstress.suites.findings.comparisons import comparison_table

    labels = np.arange(30) % 5
    assistant = np.arange(30) < 9  # 9 of 30 right
    classifier = np.arange(30) < 24  # 24 of 30, and every one the assistant has
    condition = "format=letters,options_from=clip,options=4"

    def block(correct):
        return Outcomes(
            "question", {"correct": correct, "answered": np.ones(30, bool), "label": labels}
        )

    items = {
        ("llava", "objects", "multiple_choice", condition): [block(assistant)],
        ("clip", "objects", "multiple_choice", condition): [block(classifier)],
    }
    (row,) = comparison_table(items).itertuples(index=False)
    assert row.test == "McNemar exact" and row.n == 30
    assert {row.a_only, row.b_only} == {0, 15}  # 15 discordant questions, all the classifier's
    assert row.p == pytest.approx(2 * 0.5**15) and row.significant
