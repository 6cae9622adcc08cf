"""ImageNet-D's scoring of an assistant's answer (`format: imagenet-d`) against a transcription of
its own code, and the strict reading kept as `imagenet-d-strict`.

The reference below is `LLaVA/compute_accuracy.py` of github.com/chenshuang-zhang/imagenet_d
(commit 30045f74a89ace0018100b91388ebc7f00832fd4): its `word_mapping_dict`, its
`test_word_mapping` and the branches that turn the two tests into a verdict, copied with only the
pandas loop around them left out (MIT licence, Copyright (c) 2024 Chenshuang Zhang; the LLaVA/
folder under LLaVA's Apache-2.0).
"""

from __future__ import annotations

import pytest

from vlstress.suites.assistant import answers
from vlstress.testsets.labelmaps import imagenet_d_synonyms

# ----------------------------------------------------------------- the reference, transcribed

word_mapping_dict = {
    "dishcloth": ["dishrag"],
    "weight (exercise)": ["dumbbell", "weight"],
    "nail (fastener)": ["nail"],
    "tv": ["television"],
    "iron (for clothes)": ["iron"],
    "t shirt": ["t-shirt", "shirt"],
    "laptop (open)": ["laptop"],
    "dress shoe (men)": ["dress shoe"],
    "binder (closed)": ["binder"],
    "portable heater": ["heater"],
    "computer mouse": ["mouse"],
    "still camera": ["camera"],
    "lampshade": ["lamp shade"],
    "trash bin": ["trash can"],
    "winter glove": ["glove"],
    "band aid": ["band-aid", "bandaid"],
    "toilet paper roll": ["roll of toilet paper"],
    "pill bottle": ["pill"],
    "soup bowl": ["bowl of soup"],
    "water bottle": ["bottle of water"],
    "pop can": ["can of"],
    "weight scale": ["scale"],
    "sandal": ["flip flop"],
    "swimming trunks": ["swimming trunk"],
    "bread loaf": ["bread"],
    "coffee or french press": ["coffee press", "french press", "coffee machine", "coffee maker"],
    "mixing or salad bowl": ["mixing bowl", "salad bowl"],
    "alarm clock": ["clock"],
    "wheel": ["bicycle wheel"],
    "ladle": ["spoon"],
    "matchstick": ["match"],
    "cellphone": ["cell phone", "mobile phone"],
}


def test_word_mapping(word, answer, word_mapping_dict):
    if word in answer:
        return True
    if word in word_mapping_dict.keys():
        for map_word in word_mapping_dict[word]:
            if map_word in answer:
                return True
    return False


test_word_mapping.__test__ = False  # type: ignore[attr-defined]  # their helper, not a test


def reference(gt_category: str, pred_category: str, answer: str) -> str:
    """compute_accuracy.py's `correct_flag` of one row, without its "LLaVa " prefix."""
    answer_test = answer.lower()

    test_gt = test_word_mapping(gt_category, answer_test, word_mapping_dict)
    test_pred = test_word_mapping(pred_category, answer_test, word_mapping_dict)

    if (
        gt_category == "pen"
        and pred_category == "can opener"
        or gt_category == "plate"
        and pred_category == "drying rack for plates"
    ):
        if test_pred:
            correct_flag = "FALSE"
        elif test_gt:
            correct_flag = "TRUE"
        else:
            correct_flag = "TODO"
    elif (
        gt_category == "can opener"
        and pred_category == "pen"
        or gt_category == "drying rack for plates"
        and pred_category == "plate"
    ):
        if test_gt:
            correct_flag = "TRUE"
        elif test_pred:
            correct_flag = "FALSE"
        else:
            correct_flag = "TODO"
    elif test_gt and test_pred:
        correct_flag = "DOUBLE"
    elif test_gt:
        correct_flag = "TRUE"
    elif test_pred:
        correct_flag = "FALSE"
    else:
        correct_flag = "TODO"
    return correct_flag


# ----------------------------------------------------------------- tricky replies

# (truth, confusion, reply): names spelled alike here and in ImageNet-D's evaluation
TRICKY = [
    ("pen", "letter opener", "letter opener"),  # "pen" is inside "opener": both
    ("pen", "letter opener", "A pen."),
    ("wheel", "bicycle", "a bicycle wheel"),  # both, and wheel's synonym
    ("bicycle", "wheel", "The main object is a bicycle wheel"),
    ("pen", "can opener", "a can opener"),  # special case: the confusion decides first
    ("pen", "can opener", "a pen and a can opener"),
    ("pen", "can opener", "It is a pen."),
    ("can opener", "pen", "a can opener"),  # reversed: the truth decides first
    ("can opener", "pen", "the pen is next to a can opener"),
    ("can opener", "pen", "Pen"),
    ("plate", "drying rack for plates", "a drying rack for plates"),
    ("plate", "drying rack for plates", "a plate"),
    ("drying rack for plates", "plate", "Drying rack for plates."),
    ("drying rack for plates", "plate", "a plate"),
    ("drying rack for plates", "plate", "a dish rack"),
    ("still camera", "tv", "A Still Camera"),  # case
    ("tv", "monitor", "a television"),  # a synonym
    ("tv", "monitor", "a tv monitor"),
    ("cellphone", "remote control", "a mobile phone remote"),
    ("orange", "lemon", "lemonade"),
    ("fan", "hair dryer", "a fancy hair dryer"),  # fan inside fancy
    ("ladle", "spatula", "a spoon"),
    ("matchstick", "lighter", "a matching lighter"),
    ("pop can", "water bottle", "a can of soda"),
    ("pop can", "water bottle", "a bottle of water"),
    ("tie", "necklace", "a tiered necklace"),
    ("sock", "sandal", "flip flops"),
    ("wok", "frying pan", "a pan"),
    ("mug", "tea cup", "teacup"),
    ("alarm clock", "watch", "a watch with an alarm"),
    ("lemon", "orange", ""),
    ("lemon", "orange", "Neither"),
]

VERDICT = {"TRUE": answers.RIGHT, "FALSE": answers.WRONG, "DOUBLE": answers.DOUBLE}


@pytest.mark.parametrize("truth, confusion, reply", TRICKY)
def test_imagenet_d_verdicts_are_compute_accuracy_s(truth, confusion, reply):
    synonyms = imagenet_d_synonyms()
    expected = VERDICT.get(reference(truth, confusion, reply), answers.NEITHER)
    assert answers.imagenet_d_verdict(reply, truth, confusion, synonyms) == expected
    # as an option: the truth when right, the confusion when wrong, none otherwise; the truth
    # first (ImageNet-D's order) or second
    option = {answers.RIGHT: truth, answers.WRONG: confusion}.get(expected)
    for names in ([truth, confusion], [confusion, truth]):
        chosen = answers.parse(reply, names, "imagenet-d", synonyms, truth=names.index(truth))
        assert (None if chosen is None else names[chosen]) == option


def test_the_tricky_replies_are_tricky():
    """The strict reading and ImageNet-D's differ on 5 of them: letter opener, a bicycle wheel
    (either truth), a pen and a can opener, the pen next to a can opener."""
    synonyms = imagenet_d_synonyms()
    differ = 0
    for truth, confusion, reply in TRICKY:
        names = [truth, confusion]
        exact = answers.parse(reply, names, "imagenet-d", synonyms, truth=0)
        strict = answers.parse(reply, names, "imagenet-d-strict", synonyms, truth=0)
        differ += exact != strict
    assert differ == 5


@pytest.mark.parametrize(
    "truth, confusion, reply, exact, strict",
    [
        # ImageNet-D: both mentioned (DOUBLE, left out); strict: the longer name only
        ("pen", "letter opener", "letter opener", None, "letter opener"),
        ("wheel", "bicycle", "a bicycle wheel", None, "wheel"),
        # ImageNet-D: the confusion decides first; strict: both mentioned
        ("pen", "can opener", "a pen and a can opener", "can opener", None),
        ("can opener", "pen", "the pen is next to a can opener", "can opener", None),
        # the names as the imagenet-d test-set kind writes them, with the shipped synonyms
        ("t-shirt", "sweater", "a white shirt", "t-shirt", "t-shirt"),
        (
            "coffee/french press",
            "teapot",
            "a French press",
            "coffee/french press",
            "coffee/french press",
        ),
        (
            "mixing/salad bowl",
            "soup bowl",
            "a salad bowl",
            "mixing/salad bowl",
            "mixing/salad bowl",
        ),
    ],
)
def test_imagenet_d_and_the_strict_reading(truth, confusion, reply, exact, strict):
    synonyms = imagenet_d_synonyms()
    names = [truth, confusion]

    def read(form):
        chosen = answers.parse(reply, names, form, synonyms, truth=0)
        return None if chosen is None else names[chosen]

    assert read("imagenet-d") == exact
    assert read("imagenet-d-strict") == strict


def test_imagenet_d_needs_two_options_and_the_truth():
    with pytest.raises(ValueError, match="two options"):
        answers.parse("a dog", ["dog", "cat", "cow"], "imagenet-d", {}, truth=0)
    with pytest.raises(ValueError, match="two options"):
        answers.parse("a dog", ["dog", "cat"], "imagenet-d", {})


def test_the_params_check_knows_the_strict_reading():
    from vlstress.suites.assistant.params import SCHEMA, problems

    assert SCHEMA["assistant"]["properties"]["format"]["enum"] == [
        "letters",
        "imagenet-d",
        "imagenet-d-strict",
    ]
    params = {
        "assistant": {"testsets": ["d"], "options_from": "clip", "options": 3},
        "zeroshot": {"testsets": {"d": {"kind": "imagenet-d"}}},
        "models": {"clip": {"arch": "ViT-B-32"}},
    }
    on = frozenset({"assistant", "zeroshot"})
    for form in ("imagenet-d", "imagenet-d-strict"):
        params["assistant"]["format"] = form
        assert any(f"format {form}) offers 2 options" in p for p in problems(params, on))
