"""Putting a question to an assistant and reading its answer strictly, in one of two formats.

`letters` (LLaVA-1.5's multiple-choice format, as it is evaluated on MMBench): the question, one
option a line (`A. goldfish`), then "Answer with the option's letter from the given choices
directly." An answer counts only when it names exactly one option:
- its letter alone, bare or in brackets or with a full stop (`B`, `B.`, `(B)`, `B)`, `B:`),
- its letter followed by that option's class name (`B. goldfish`, `(B) goldfish`),
- or that option's class name alone (case and a final full stop aside).

`imagenet-d` (ImageNet-D's own VQA question, its repository's `eval_imagenet_d.py`): "What is the
main object in this image? Choose from the following list: goldfish, shark." The answer counts when
it mentions exactly one option's class name, or a synonym ImageNet-D's evaluation accepts for it
(`compute_accuracy.py`: still camera -> camera), case aside; a longer option's name is found first,
so that "can opener" does not also mention "pen".

Anything else (another letter, a letter with another option's name, two options, none) is
unparseable: scored wrong, and counted.
"""

from __future__ import annotations

import re

from vlstress.suites.assistant.questions import LETTERS

INSTRUCTION = "Answer with the option's letter from the given choices directly."
_LETTER = re.compile(r"^\(?([A-Z])(?:[.):]|\)\.)?(?:\s+(.*))?$", re.DOTALL)


def prompt(question: str, names: list[str], form: str = "letters") -> str:
    """The text of one question with its options."""
    if form == "imagenet-d":
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
) -> int | None:
    """The index of the option an answer names, or None when it names none or more than one."""
    if form == "imagenet-d":
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
