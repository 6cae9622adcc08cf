"""The work of the assistant suite's steps: the questions of a test set (from a classifier's
confusions), an assistant's answers to them, and a classifier's choice among the same options.

Every model's record is task `multiple_choice`, condition {options, options_from, format}:
accuracy (% of questions answered with the true class), accuracy_answered (% of the answers that
name one option), unparseable (% of answers naming no single option, scored wrong; 0 for a
classifier, which always picks one), and the counts. The sidecar lists every question with the
model's answer, so a count can be checked by hand; the outcomes file beside the record keeps per
question whether the answer is right (`question_outcomes`), so an assistant and a classifier are
compared on the same questions.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from vlstress import provenance
from vlstress.embedding.files import load_embeddings, same_model
from vlstress.errors import VlstressError
from vlstress.io import sha256_file
from vlstress.outcomes import Outcomes
from vlstress.record import Record, assemble
from vlstress.suites.assistant import answers, questions
from vlstress.suites.assistant.names import FORMATS, IMAGENET_D_FORMS, TASK
from vlstress.suites.zeroshot import classifier
from vlstress.testsets import labelmaps
from vlstress.testsets import manifest as testsets


def _scores(testset, image_emb: Path, classifier_path: Path) -> tuple[np.ndarray, dict[str, Any]]:
    """(images x classes scores, the model block) of one model's zero-shot files of a test set."""
    embeddings, emb_meta = load_embeddings(image_emb, len(testset.images), "test-set image")
    weights, clf_meta = classifier.load(classifier_path, testset.classes)
    model = same_model(image_emb, emb_meta, (classifier_path, clf_meta))
    # as the zero-shot evaluation scores them (same dtype): a classifier's choice among its own
    # confusions is then exactly its zero-shot top-1
    scores = classifier.scores(embeddings, weights, clf_meta)
    return scores, {
        "model": model,
        "device": emb_meta["provenance"].get("device"),
        "seed": emb_meta["provenance"].get("seed"),
    }


def build_questions(
    testset_path: Path,
    image_emb: Path,
    classifier_path: Path,
    n_options: int,
    seed: int,
    form: str = "letters",
) -> dict[str, Any]:
    """The questions file of a test set: options from the classifier's top confusions."""
    if form not in FORMATS:
        raise VlstressError(f"unknown question format {form!r}: {', '.join(FORMATS)}")
    if form in IMAGENET_D_FORMS and n_options != 2:
        raise VlstressError(
            f"ImageNet-D's question offers 2 options (the truth and the top confusion), not "
            f"{n_options}"
        )
    testset = testsets.load(testset_path)
    scores, source = _scores(testset, image_emb, classifier_path)
    try:
        options = questions.draw_options(
            scores, testset.labels, n_options, seed, truth_first=form in IMAGENET_D_FORMS
        )
    except VlstressError as exc:
        raise VlstressError(f"test set {testset.dataset}: {exc}") from None
    order = "the truth first, then the confusions" if form in IMAGENET_D_FORMS else "seeded"
    return {
        "kind": questions.KIND,
        "format": form,
        "testset": testset.dataset,
        "classes": testset.classes,
        "root": testset.root,
        "n_options": n_options,
        "seed": seed,
        "options_from": source["model"],
        "questions": questions.questions_block(testset.images, options),
        "provenance": provenance.build(
            "assistant-options",
            {
                "options": n_options,
                "format": form,
                "rule": f"the true class + the top confusions, order: {order}",
            },
            seed=seed,
            model=source["model"],
            inputs={
                str(p): sha256_file(p)
                for p in (testsets.manifest_path(testset_path), image_emb, classifier_path)
            },
        ),
    }


def _matching(testset_path: Path, questions_path: Path) -> tuple[Any, dict[str, Any]]:
    """The test set and its questions file, checked to be about the same images."""
    testset = testsets.load(testset_path)
    asked = questions.load(questions_path)
    if asked["testset"] != testset.dataset or [q["path"] for q in asked["questions"]] != [
        entry["path"] for entry in testset.images
    ]:
        raise VlstressError(
            f"questions {questions_path} are not about test set {testset_path} (other images); "
            "re-run `vlstress assistant-options`"
        )
    return testset, asked


def _record(
    testset, asked: dict[str, Any], chosen: list[int | None], block: dict[str, Any]
) -> Record:
    truth = [q["options"].index(q["label"]) for q in asked["questions"]]
    n = len(truth)
    correct = sum(int(c == t) for c, t in zip(chosen, truth))
    unparseable = sum(c is None for c in chosen)
    answered = n - unparseable
    return assemble(
        TASK,
        dataset={
            "name": testset.dataset,
            "kind": testset.kind,
            "n_images": n,
            "n_classes": len(testset.classes),
        },
        condition={
            "options": asked["n_options"],
            "options_from": asked["options_from"]["slug"],
            "format": asked["format"],
        },
        metrics={
            "accuracy": 100.0 * correct / n,
            # of the answers that name one option: ImageNet-D's own accuracy, true / (true + false)
            "accuracy_answered": 100.0 * correct / answered if answered else None,
            "unparseable": 100.0 * unparseable / n,
            "n_questions": n,
            "n_correct": correct,
            "n_unparseable": unparseable,
        },
        provenance=block,
    )


def question_outcomes(asked: dict[str, Any], chosen: list[int | None]) -> Outcomes:
    """Per question, in the test set's order: whether the answer is the right option, whether it
    names one option at all, and the true class (two answerers of the same questions are paired
    on them: McNemar)."""
    truth = [q["options"].index(q["label"]) for q in asked["questions"]]
    return Outcomes(
        "question",
        {
            "correct": np.array([c == t for c, t in zip(chosen, truth)], dtype=bool),
            "answered": np.array([c is not None for c in chosen], dtype=bool),
            "label": np.array([int(q["label"]) for q in asked["questions"]], dtype=np.int64),
        },
    )


def _sidecar(asked: dict[str, Any], replies: Sequence[str | None], chosen: list[int | None]):
    classes = asked["classes"]
    return {
        "kind": "multiple-choice-answers",
        "questions": [
            {
                "path": q["path"],
                "options": [classes[c] for c in q["options"]],
                "answer": q["answer"],
                **({"reply": reply} if reply is not None else {}),
                "chosen": None if c is None else questions.LETTERS[c],
                "correct": c is not None and questions.LETTERS[c] == q["answer"],
            }
            for q, reply, c in zip(asked["questions"], replies, chosen)
        ],
    }


def choose(
    testset_path: Path, image_emb: Path, classifier_path: Path, questions_path: Path
) -> tuple[Record, dict[str, Any], Outcomes]:
    """A classifier's answers: the option of highest score (ties: the lower class, as the
    zero-shot top-1's argmax)."""
    testset, asked = _matching(testset_path, questions_path)
    scores, source = _scores(testset, image_emb, classifier_path)
    chosen: list[int | None] = []
    for i, q in enumerate(asked["questions"]):
        best = min(q["options"], key=lambda c: (-float(scores[i, c]), int(c)))
        chosen.append(q["options"].index(best))
    block = provenance.build(
        "choose-option",
        {"rule": "the option of highest zero-shot score"},
        seed=source["seed"],
        model=source["model"],
        device=source["device"],
        inputs={
            str(p): sha256_file(p)
            for p in (
                testsets.manifest_path(testset_path),
                image_emb,
                classifier_path,
                questions_path,
            )
        },
    )
    return (
        _record(testset, asked, chosen, block),
        _sidecar(asked, [None] * len(chosen), chosen),
        question_outcomes(asked, chosen),
    )


def ask(
    card: Path,
    testset_path: Path,
    questions_path: Path,
    *,
    question: str,
    max_new_tokens: int,
    batch_size: int,
    device: str,
    threads: int,
    precision: str,
) -> tuple[Record, dict[str, Any], Outcomes]:
    """An assistant's answers to every question, read as the questions' format says
    (`answers.parse`: strictly, or as ImageNet-D scores them)."""
    import torch

    from vlstress.embedding import llava_models, models
    from vlstress.embedding import precision as precisions

    spec = models.spec_from_card(card)
    if spec.kind != "llava":
        raise VlstressError(
            f"model {spec.slug!r} is of kind {spec.kind}, not an assistant (llava): classifiers "
            "answer through `vlstress choose-option`"
        )
    testset, asked = _matching(testset_path, questions_path)
    device = models.resolve_device(device)
    precisions.check(precision, device)
    torch.set_num_threads(threads)
    dtype = "float32" if precision == "fp32" else precisions.autocast_dtype(device)
    model, processor = llava_models.load(
        spec.slug,
        spec.arch,
        spec.pretrained,
        seed=spec.seed,
        cache_dir=spec.cache_dir,
        device=device,
        dtype=dtype,
    )
    classes, form = asked["classes"], asked["format"]
    names = [[classes[c] for c in q["options"]] for q in asked["questions"]]
    replies = llava_models.generate(
        model,
        processor,
        [Path(testset.root) / q["path"] for q in asked["questions"]],
        [answers.prompt(question, options, form) for options in names],
        batch_size=batch_size,
        max_new_tokens=max_new_tokens,
        device=device,
        desc=f"{spec.slug} {testset.dataset}",
    )
    synonyms = labelmaps.imagenet_d_synonyms() if form in IMAGENET_D_FORMS else None
    chosen = [
        answers.parse(r, options, form, synonyms, truth=q["options"].index(q["label"]))
        for r, options, q in zip(replies, names, asked["questions"])
    ]
    model_block = {
        **models.describe(spec, model),
        **llava_models.n_params(model),
        "revision": llava_models.revision(model),
    }
    block = provenance.build(
        "ask",
        {
            "question": question,
            "format": form,
            "prompt_example": llava_models.chat_prompt(
                processor, answers.prompt(question, names[0], form)
            ),
            "decoding": "greedy",
            "max_new_tokens": max_new_tokens,
            "batch_size": batch_size,
            **precisions.describe(precision, device),
            "dtype": dtype,
        },
        seed=spec.seed,
        model=model_block,
        device=device,
        inputs={
            str(p): sha256_file(p)
            for p in (card, testsets.manifest_path(testset_path), questions_path)
        },
        packages=("transformers", "tokenizers"),
    )
    return (
        _record(testset, asked, chosen, block),
        _sidecar(asked, replies, chosen),
        question_outcomes(asked, chosen),
    )
