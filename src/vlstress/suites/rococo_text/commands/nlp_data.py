"""`vlstress nlp-data`: install the offline NLP resources (WordNet 3.0 for nltk) into a folder.

Idempotent: a folder that already holds WordNet is left as it is. Sources, tried
in order: an existing install (nltk's search path, /usr/share/wordnet of Debian's
`wordnet-base`), nltk's data server, Debian's package archive (`apt-get download`
+ `dpkg-deb -x`, no root needed). See docs/text-variants.md.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from vlstress.argtypes import names
    from vlstress.suites.rococo_text.nlp import DEFAULT_NLTK_DATA

    parser.add_argument(
        "--out",
        type=Path,
        default=Path(DEFAULT_NLTK_DATA),
        help=f"nltk data folder (default {DEFAULT_NLTK_DATA})",
    )
    parser.add_argument(
        "--sources",
        type=names,
        default=["copy", "nltk", "debian"],
        help=(
            "comma-separated sources to try in order: copy (existing install), nltk "
            "(nltk.download), debian (apt-get download wordnet-base)"
        ),
    )
    parser.add_argument(
        "--force", action="store_true", help="reinstall even when the folder already holds WordNet"
    )


def run(args: argparse.Namespace) -> None:
    from vlstress.suites.rococo_text.nlp import (
        install_wordnet,
        load_wordnet,
        wordnet_folder,
    )

    record = install_wordnet(args.out, tuple(args.sources), force=args.force)
    wn = load_wordnet(str(args.out))
    n_nouns = sum(1 for _ in wn.all_lemma_names(pos="n"))
    print(
        f"WordNet ready in {wordnet_folder(args.out)} (source: {record['source']}; {n_nouns} "
        "noun lemmas)"
    )
