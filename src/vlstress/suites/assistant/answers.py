"""Putting a question to an assistant and reading its answer, in one of three formats.

`letters` (LLaVA-1.5's multiple-choice format, as it is evaluated on MMBench): the question, one
option a line (`A. goldfish`), then "Answer with the option's letter from the given choices
directly." An answer counts only when it names exactly one option:
- its letter alone, bare or in brackets or with a full stop (`B`, `B.`, `(B)`, `B)`, `B:`),
- its letter followed by that option's class name (`B. goldfish`, `(B) goldfish`),
- or that option's class name alone (case and a final full stop aside).

`imagenet-d` (ImageNet-D's own VQA question, its repository's `eval_imagenet_d.py`): "What is the
main object in this image? Choose from the following list: goldfish, shark.", two options, read
exactly as ImageNet-D scores it (`imagenet_d_verdict`, after `LLaVA/compute_accuracy.py` of
github.com/chenshuang-zhang/imagenet_d at commit 30045f74a89ace0018100b91388ebc7f00832fd4), so that
the numbers compare with the paper's: an option is mentioned when its class name or one of the
synonyms that file accepts for it (still camera -> camera) is a substring of the lower-cased
answer; an answer mentioning the truth alone is right, the confusion alone wrong, both ("DOUBLE")
or neither ("TODO") left out of its accuracy. Two pairs are special-cased there, one name being
inside the other: truth pen / confusion can opener and truth plate / confusion drying rack for
plates (the confusion wins when mentioned), and the reverse pairs (the truth wins). So "letter
opener" for the truth pen mentions both (pen is inside "opener"), and "a bicycle wheel" for the
truth wheel and the confusion bicycle mentions both.

`imagenet-d-strict`: the same question, read strictly: each mention is blanked out once found,
longest name first, so that a name inside a longer one is not found again ("letter opener" names
letter opener only), and the answer counts when it mentions exactly one option.

Anything else (another letter, a letter with another option's name, two options, none) is
unparseable: scored wrong, and counted.
"""

from __future__ import annotations

import re

from vlstress.suites.assistant.names import IMAGENET_D_FORMS
from vlstress.suites.assistant.questions import LETTERS

INSTRUCTION = "Answer with the option's letter from the given choices directly."
_LETTER = re.compile(r"^\(?([A-Z])(?:[.):]|\)\.)?(?:\s+(.*))?$", re.DOTALL)
# ImageNet-D's special cases (compute_accuracy.py): (truth, confusion) -> whose mention decides
# first. With truth pen and confusion can opener, "can opener" contains "pen": the confusion
# decides; with the pair reversed, the truth does
CONFUSION_FIRST = {("pen", "can opener"), ("plate", "drying rack for plates")}
TRUTH_FIRST = {("can opener", "pen"), ("drying rack for plates", "plate")}
# ImageNet-D's verdicts, and the option each one reads as (None: left out of its accuracy)
RIGHT, WRONG, DOUBLE, NEITHER = "true", "false", "double", "todo"


def prompt(question: str, names: list[str], form: str = "letters") -> str:
    """The text of one question with its options."""
    if form in IMAGENET_D_FORMS:
        return f"{question.strip()} Choose from the following list: {', '.join(names)}."
    lines = [question.strip()]
    lines += [f"{LETTERS[i]}. {name}" for i, name in enumerate(names)]
    lines.append(INSTRUCTION)
    return "\n".join(lines)


def _plain(text: str) -> str:
    return " ".join(text.strip().rstrip(".").split()).casefold()


def parse(
    answer: str,
    names: list[str],
    form: str = "letters",
    synonyms: dict[str, tuple[str, ...]] | None = None,
    truth: int | None = None,
) -> int | None:
    """The index of the option an answer names, or None when it names none or more than one
    (`imagenet-d`: ImageNet-D's verdict, which needs the index of the true option, `truth`)."""
    if form == "imagenet-d":
        if len(names) != 2 or truth not in (0, 1):
            raise ValueError("ImageNet-D's reading needs two options and the true one's index")
        verdict = imagenet_d_verdict(answer, names[truth], names[1 - truth], synonyms or {})
        return {RIGHT: truth, WRONG: 1 - truth}.get(verdict)
    if form == "imagenet-d-strict":
        return _mentioned(answer, names, synonyms or {})
    text = answer.strip()
    match = _LETTER.match(text)
    if match:
        index = LETTERS.index(match.group(1))
        if index >= len(names):
            return None
        rest = match.group(2)
        if rest is None or _plain(rest) == _plain(names[index]):
            return index
        return None
    plain = _plain(text)
    named = [i for i, name in enumerate(names) if _plain(name) == plain]
    return named[0] if len(named) == 1 else None


def imagenet_d_verdict(
    answer: str, truth: str, confusion: str, synonyms: dict[str, tuple[str, ...]]
) -> str:
    """ImageNet-D's verdict on an answer (RIGHT, WRONG, DOUBLE or NEITHER), as its
    `LLaVA/compute_accuracy.py` (github.com/chenshuang-zhang/imagenet_d, commit 30045f7) decides
    it: a class is mentioned when its name, or a synonym of it, is a substring of the lower-cased
    answer; the truth alone is RIGHT, the confusion alone WRONG, both DOUBLE, neither NEITHER
    (TODO there), except for the pairs of CONFUSION_FIRST and TRUTH_FIRST, where one mention
    decides before the other and there is no DOUBLE. The class names are lower-cased too
    (ImageNet-D's are lower case already; a test set with capitals then reads the same way)."""
    text = answer.lower()

    def mentioned(name: str) -> bool:
        return any(word.lower() in text for word in (name, *synonyms.get(name, ())))

    said_truth, said_confusion = mentioned(truth), mentioned(confusion)
    pair = (truth.lower(), confusion.lower())
    if pair in CONFUSION_FIRST:
        return WRONG if said_confusion else RIGHT if said_truth else NEITHER
    if pair in TRUTH_FIRST:
        return RIGHT if said_truth else WRONG if said_confusion else NEITHER
    if said_truth and said_confusion:
        return DOUBLE
    return RIGHT if said_truth else WRONG if said_confusion else NEITHER


def _mentioned(answer: str, names: list[str], synonyms: dict[str, tuple[str, ...]]) -> int | None:
    """The one option whose name (or a synonym) the answer mentions; a mention is blanked out once
    found, longest first, so that a name inside a longer one is not found twice."""
    text = answer.casefold()
    words = [
        (word.casefold(), i)
        for i, name in enumerate(names)
        for word in (name, *synonyms.get(name, ()))
    ]
    hits = set()
    for word, i in sorted(words, key=lambda item: -len(item[0])):
        if word and word in text:
            hits.add(i)
            text = text.replace(word, " " * len(word))
    return hits.pop() if len(hits) == 1 else None
