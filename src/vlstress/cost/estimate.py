"""What a grid of params costs: per suite and per model, GPU-hours, CPU-hours, disk, wall time.

The params arrive as their merged mapping and the set of suites that are on (the caller reads
them with `vlstress.params`); nothing here imports the stage declarations or a model library.
The model of the work mirrors what the steps do:

- Each model's GPU work is the images and texts its jobs embed: `embed_retrieval` (the dataset's
  images and captions, the RoCOCO image variants and caption sets), `zeroshot_classifiers`
  (classes x templates prompts per test set, the shape-bias classifier, the per-template text
  sets of the prompts suite), `embed_zeroshot` (the test sets, the corrupted copies, the
  typographic copy, the OOD sets, the cue-conflict stimuli) and one `attack` job per attack
  (a clean pass, then per eps and restart its steps, each a forward and backward pass of
  `Rates.gradient_pass` clean passes; query attacks count forward passes). Calibration, visual
  factors and accuracy vs recall read those embeddings: no model work.
- Time = image passes / images per s + texts / captions per s of the model's architecture, plus
  a start-up per GPU job. The rates are measured for one architecture (ViT-B-32) and scaled by
  GFLOPs (`vlstress.cost.profile`); a cheaper architecture is capped at the measured data path
  (decoding), which no model gets past.
- Shared work is done once: corrupting the test set, the typographic copy, mixing/patching the
  retrieval images, the caption sets and their statistics (CPU), the EI scorer and fine-tuning
  (GPU).
- Disk: every stored embedding row (images, captions, classifier rows, per-template rows) x the
  architecture's embedding width x 4 bytes (float32, as written; float16 halves it).
- Wall on a SLURM cluster of G GPUs and C CPU cores: the shared CPU work over C cores, then the
  shared GPU jobs, then the models' jobs, independent across models, packed on the G GPUs
  longest first (= ceil(models / G) x per-model time when every model costs the same). The
  phases are added, not overlapped: an upper bound on what Snakemake's scheduler does.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from vlstress.cost import sizes
from vlstress.cost.profile import ArchCost, arch_cost
from vlstress.cost.rates import Rates
from vlstress.embedding.kinds import LLAVA, model_kind
from vlstress.errors import VlstressError

BYTES_FLOAT32 = 4
HOUR = 3600.0
STARTUP = "start-up"


# attack kind -> default steps (vlstress.suites.adversarial.attacks.KINDS)
ATTACK_STEPS = {
    "fgsm": 1,
    "bim": 10,
    "pgd": 10,
    "mifgsm": 10,
    "difgsm": 10,
    "deepfool": 50,
    "spsa": 10,
    "square": 1000,
    "nes": 0,  # no default: its query budget is required
    "autoattack": 0,
}
RANDOM_START = ("pgd", "spsa")  # kinds whose restarts rerun the attack
# frames per sequence of the stability suite's perturbations (suites/stability/perturbations.py;
# a test holds the two equal): 31, translate 41
STABILITY_FRAMES = {"translate": 41}
STABILITY_DEFAULT_FRAMES = 31
SPSA_SAMPLES = 128  # torchattacks SPSA nb_sample as vlstress sets it
AUTOATTACK_STEPS = 10  # torchattacks APGD, APGD-T and FAB steps; Square 5,000 queries
AUTOATTACK_QUERIES = 5000
# AdaIN (suites/stylized/adain.py) at 224 px: the VGG encoder to relu4_1 on the content and on the
# style image, then the decoder, 24.2 GFLOPs each (a test counts the modules' convolutions)
ADAIN_GFLOPS_224 = 72.66
# the overlap suite (suites/overlap): planted copies per training image chosen (resized,
# re-encoded, cropped), an exact index up to this many training images under `index: auto`, and
# faiss's IVF training (k-means on at most 256 points a list, 10 iterations)
PLANTED_TRANSFORMS = 3
AUTO_FLAT_MAX = 100_000
IVF_POINTS_PER_LIST = 256
IVF_ITERATIONS = 10


@dataclass(frozen=True)
class Work:
    """What one suite asks of each model."""

    suite: str
    what: str
    images: int = 0  # images embedded and stored
    passes: float = 0.0  # further image passes (attack steps), in clean forward passes
    texts: int = 0  # texts through the text tower
    text_rows: int = 0  # text embeddings stored
    jobs: int = 0  # GPU jobs it adds per model
    upper_bound: bool = False  # an attack that stops early on a fooled image

    @property
    def image_passes(self) -> float:
        return self.images + self.passes


@dataclass(frozen=True)
class Shared:
    """Work done once for the whole grid: CPU core-seconds, and GPU jobs on `arch` (their
    measured seconds, or passes and texts priced at the architecture's rates)."""

    name: str
    what: str
    cpu_s: float = 0.0
    gpu_s: float = 0.0
    arch: str | None = None
    image_passes: float = 0.0
    texts: float = 0.0
    jobs: int = 0

    def priced(self, images_s: float, captions_s: float, startup_s: float) -> Shared:
        seconds = self.image_passes / images_s + self.texts / captions_s + self.jobs * startup_s
        return replace(self, gpu_s=self.gpu_s + seconds, image_passes=0.0, texts=0.0, jobs=0)


@dataclass(frozen=True)
class ModelCost:
    slug: str
    arch: str
    images_per_s: float
    captions_per_s: float
    gpu_s: Mapping[str, float]  # per suite, and the jobs' start-up
    rows: int  # embedding rows stored
    embed_dim: int
    image_gflops: float

    @property
    def total_s(self) -> float:
        return sum(self.gpu_s.values())

    @property
    def disk_bytes(self) -> int:
        return self.rows * self.embed_dim * BYTES_FLOAT32


@dataclass(frozen=True)
class Estimate:
    sets: list[sizes.SetSize]
    dataset: sizes.DatasetSize
    work: list[Work]
    shared: list[Shared]
    models: list[ModelCost]
    rates: Rates
    gpus: int
    cpus: int
    notes: list[str] = field(default_factory=list)

    @property
    def model_gpu_s(self) -> float:
        return sum(m.total_s for m in self.models)

    @property
    def shared_gpu_s(self) -> float:
        return sum(s.gpu_s for s in self.shared)

    @property
    def shared_cpu_s(self) -> float:
        return sum(s.cpu_s for s in self.shared)

    @property
    def makespan_s(self) -> float:
        return makespan([m.total_s for m in self.models], self.gpus)

    @property
    def wall_s(self) -> float:
        return self.shared_cpu_s / self.cpus + self.shared_gpu_s + self.makespan_s

    @property
    def disk_bytes(self) -> int:
        return sum(m.disk_bytes for m in self.models)


def makespan(times: Sequence[float], gpus: int) -> float:
    """Longest-first list scheduling of independent jobs on `gpus` devices: the finish time."""
    if gpus < 1:
        raise VlstressError(f"the number of GPUs must be at least 1, not {gpus}")
    loads = [0.0] * min(gpus, max(len(times), 1))
    for t in sorted(times, reverse=True):
        heapq.heapreplace(loads, loads[0] + t)
    return max(loads)


def arch_rates(arch: ArchCost, reference: ArchCost, rates: Rates) -> tuple[float, float]:
    """(images/s, captions/s) of an architecture: the measured rates x GFLOPs of the measured
    architecture / its GFLOPs, images capped at the measured data path."""
    images = rates.images_per_s * reference.image_gflops / arch.image_gflops
    if rates.data_path_images_per_s is not None:
        images = min(images, max(rates.data_path_images_per_s, rates.images_per_s))
    if not arch.text_gflops:  # no text tower (a timm classifier): it embeds no text
        return images, math.inf
    return images, rates.captions_per_s * reference.text_gflops / arch.text_gflops


def _block(values: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    block = values.get(key)
    if not isinstance(block, Mapping):
        raise VlstressError(f"params have no `{key}` block")
    return block


def _count(value: Any) -> int:
    """Items of a comma-separated string or a list (eps budgets, caption sets, ...)."""
    if value is None:
        return 0
    if isinstance(value, (list, tuple)):
        return len(value)
    return len([v for v in str(value).split(",") if v.strip()])


def _extra(value: Any) -> dict[str, str]:
    if isinstance(value, Mapping):
        return {str(k): str(v) for k, v in value.items()}
    pairs = [p.partition("=") for p in str(value or "").split(",") if "=" in p]
    return {k.strip(): v.strip() for k, _, v in pairs}


def attack_passes(attack: Mapping[str, Any], classes: int, gradient: float) -> tuple[float, bool]:
    """Clean passes per image of one attack at all its eps (the clean pass not included), and
    whether that is an upper bound (the attack stops early on images it fooled)."""
    kind = str(attack.get("kind"))
    if kind not in ATTACK_STEPS:
        raise VlstressError(
            f"attack {attack.get('name')!r}: unknown kind {kind!r} "
            f"(known: {', '.join(ATTACK_STEPS)})"
        )
    steps = attack.get("steps") or ATTACK_STEPS[kind]
    restarts = (attack.get("restarts") or 1) if kind in RANDOM_START else 1
    runs = (1 if kind == "deepfool" else max(_count(attack.get("eps")), 1)) * restarts
    if kind in ("fgsm", "bim", "pgd", "mifgsm", "difgsm"):
        return runs * steps * gradient, False
    if kind == "deepfool":  # a forward, then a backward per class (the Jacobian), each step
        return runs * steps * (1 + classes * (gradient - 1)), True
    if kind == "spsa":  # forward passes at +/- perturbations of nb_sample directions
        samples = int(_extra(attack.get("extra")).get("nb_sample", SPSA_SAMPLES))
        return runs * steps * 2 * samples, False
    if kind in ("square", "nes"):  # one forward per query; both stop on images they fooled
        return runs * steps, True
    # autoattack (standard): APGD-CE, APGD-T and FAB-T on every other class, Square's queries
    gradient_steps = AUTOATTACK_STEPS * (1 + 2 * (classes - 1))
    return runs * (gradient_steps * gradient + AUTOATTACK_QUERIES), True


def _sets_of(
    entries: Mapping[str, Any], project: Path, folder: str, given: Mapping[str, int]
) -> dict[str, sizes.SetSize]:
    return {
        name: sizes.testset_size(name, entry, project, folder, given)
        for name, entry in sorted(entries.items())
    }


@dataclass
class Plan:
    """The sizes the params name, the work per model and the shared work (shared GPU work not
    priced yet: `estimate` prices it on its architecture)."""

    dataset: sizes.DatasetSize
    sets: dict[str, sizes.SetSize] = field(default_factory=dict)
    work: list[Work] = field(default_factory=list)
    shared: list[Shared] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _retrieval(values: Mapping[str, Any], on: frozenset[str], rates: Rates, plan: Plan) -> None:
    dataset = plan.dataset
    n_img, n_cap = dataset.images, dataset.captions
    plan.work.append(
        Work(
            "retrieval",
            f"{n_img:,} images + {n_cap:,} captions ({dataset.name})",
            images=n_img,
            texts=n_cap,
            text_rows=n_cap,
            jobs=1,
        )
    )
    if "rococo_image" in on:
        block = _block(values, "image_variants")
        variants = _count(block.get("methods")) * _count(block.get("lams"))
        variants *= _count(block.get("seeds"))
        plan.work.append(
            Work(
                "rococo_image",
                f"{variants} variants (methods x lams x seeds) x {n_img:,} images",
                images=variants * n_img,
            )
        )
        plan.shared.append(
            Shared(
                "image variants",
                f"mixing/patching {variants} x {n_img:,} images",
                cpu_s=variants * n_img * rates.image_variant_core_s,
            )
        )
    if "rococo_text" in on:
        sets = _count(list(_block(values, "text_variants").get("sets") or {}))
        plan.work.append(
            Work(
                "rococo_text",
                f"{sets} caption sets x {n_cap:,} captions",
                texts=sets * n_cap,
                text_rows=sets * n_cap,
            )
        )
        plan.shared.append(
            Shared(
                "caption sets",
                f"{sets} sets x {n_cap:,} captions, and their statistics",
                cpu_s=n_cap * (sets * rates.text_variant_core_s + rates.text_stats_core_s),
            )
        )
        scorer = str((_block(values, "ei").get("scorer") or {}).get("arch"))
        plan.shared.append(
            Shared(
                "EI scores",
                f"{n_cap:,} captions and their one-word deletions ({scorer} scorer)",
                gpu_s=n_cap * rates.ei_gpu_s,  # measured per caption (the benchmark's scorer)
                arch=scorer,
                jobs=1,
            )
        )


def _zeroshot(
    values: Mapping[str, Any],
    on: frozenset[str],
    rates: Rates,
    plan: Plan,
    project: Path,
    given: Mapping[str, int],
) -> None:
    zeroshot = _block(values, "zeroshot")
    prompts = sizes.template_count(str(zeroshot.get("templates")))
    testsets = _sets_of(zeroshot.get("testsets") or {}, project, sizes.TESTSETS, given)
    plan.sets.update(testsets)
    classes = sum(s.classes for s in testsets.values())
    plan.work.append(
        Work(
            "zeroshot",
            f"{len(testsets)} test set(s); classifiers: {classes:,} classes x {prompts} prompts",
            images=sum(s.images for s in testsets.values()),
            texts=classes * prompts,
            text_rows=classes,
            jobs=2,
        )
    )

    def testset(block: str) -> sizes.SetSize:
        name = str(_block(values, block).get("testset"))
        if name not in testsets:
            raise VlstressError(f"{block}.testset {name!r} is not a zero-shot test set")
        return testsets[name]

    if "corruptions" in on:
        block = _block(values, "corruptions")
        clean = testset("corruptions")
        names = [str(n) for n in block.get("names") or []]
        severities = _count(block.get("severities"))
        images = clean.images * len(names) * severities
        plan.work.append(
            Work(
                "corruptions",
                f"{clean.name} ({clean.images:,}) x {len(names)} corruptions x "
                f"{severities} severities",
                images=images,
            )
        )
        plan.shared.append(
            Shared(
                "corrupted copies",
                f"{images:,} corrupted images (decode, corrupt, write)",
                cpu_s=sum(
                    clean.images * severities * (rates.corruption_s(n) + rates.decode_core_s)
                    for n in names
                ),
            )
        )
    if "stability" in on:
        block = _block(values, "stability")
        clean = testset("stability")
        asked = block.get("n_images")
        n = clean.images if asked is None else min(int(asked), clean.images)
        names = [str(p) for p in block.get("perturbations") or []]
        frames = sum(STABILITY_FRAMES.get(p, STABILITY_DEFAULT_FRAMES) for p in names)
        plan.work.append(
            Work(
                "stability",
                f"{n:,} sequences of {clean.name} x {len(names)} perturbations "
                f"({frames} frames an image)",
                images=n * frames,
            )
        )
        plan.shared.append(
            Shared(
                "perturbation sequences",
                f"{n * frames:,} frames (decode, perturb, write)",
                cpu_s=n * frames * rates.stability_frame_core_s,
            )
        )
    if "stylized" in on:
        _stylized(values, rates, plan, testset("stylized"))
    if "overlap" in on:
        _overlap(values, rates, plan, testsets, project, given)
    if "typographic" in on:
        clean = testset("typographic")
        plan.work.append(
            Work(
                "typographic",
                f"a copy of {clean.name} with a wrong class name written",
                images=clean.images,
            )
        )
        plan.shared.append(
            Shared(
                "typographic copy",
                f"{clean.images:,} images (priced as mixing one image: decode, draw, write)",
                cpu_s=clean.images * rates.image_variant_core_s,
            )
        )
    if "adversarial" in on:
        block = _block(values, "adversarial")
        clean = testset("adversarial")
        asked = block.get("n_images")
        n = clean.images if asked is None else min(int(asked), clean.images)
        attacks = list(block.get("attacks") or [])
        passes, bound, names = 0.0, False, []
        for attack in attacks:
            per_image, upper = attack_passes(attack, clean.classes, rates.gradient_pass)
            passes += n * (1 + per_image)  # its clean pass, then the attack
            bound = bound or upper
            names.append(f"{attack.get('name')}: {1 + per_image:,.1f}")
        plan.work.append(
            Work(
                "adversarial",
                f"{n:,} images of {clean.name}; passes per image: {', '.join(names)}",
                passes=passes,
                jobs=len(attacks),
                upper_bound=bound,
            )
        )
    if "ood" in on:
        entries = _block(values, "ood").get("sets") or {}
        oodsets = _sets_of(entries, project, sizes.OOD_SETS, given)
        plan.sets.update(oodsets)
        plan.work.append(
            Work(
                "ood",
                f"{len(oodsets)} OOD set(s) ({', '.join(oodsets)})",
                images=sum(s.images for s in oodsets.values()),
            )
        )
    if "shape_bias" in on:
        block = _block(values, "shape_bias")
        stimuli = sizes.stimuli_size(block, project)
        plan.sets[stimuli.name] = stimuli
        heads = 1000 if block.get("decision") == "imagenet16" else stimuli.classes
        plan.work.append(
            Work(
                "shape_bias",
                f"{stimuli.images:,} stimuli; classifier: {heads:,} classes x {prompts} prompts",
                images=stimuli.images,
                texts=heads * prompts,
                text_rows=heads,
            )
        )
        plan.shared.append(Shared("cue-conflict stimuli", "downloaded, already stylised"))
    if "prompts" in on:
        rows = classes * prompts
        plan.work.append(
            Work(
                "prompts",
                f"per-template text embeddings: {classes:,} classes x {prompts} prompts",
                texts=rows,
                text_rows=rows,
            )
        )
    for suite in ("calibration", "visual_factors", "accuracy_vs_recall"):
        if suite in on:
            plan.work.append(Work(suite, "reads the embeddings above: no model work"))


def _stylized(values: Mapping[str, Any], rates: Rates, plan: Plan, clean: sizes.SetSize) -> None:
    """Each model embeds the stylized copy; AdaIN makes it once, on a GPU (priced as the measured
    architecture's image rate scaled by GFLOPs, as every architecture is)."""
    px = int(_block(values, "stylized").get("size") or 224)
    gflops = ADAIN_GFLOPS_224 * (px / 224) ** 2
    reference = arch_cost(rates.reference_arch)
    plan.work.append(
        Work("stylized", f"a stylized copy of {clean.name} ({clean.images:,})", images=clean.images)
    )
    plan.shared.append(
        Shared(
            "stylized copy",
            f"{clean.images:,} images through AdaIN at {px} px ({gflops:.0f} GFLOPs each: VGG "
            "encoder on the content and the style image, decoder)",
            cpu_s=clean.images * rates.image_variant_core_s,
            arch=rates.reference_arch,
            image_passes=clean.images * gflops / reference.image_gflops,
            jobs=1,
        )
    )


def search_macs(queries: int, collection: int, width: int, block: Mapping[str, Any]) -> float:
    """Multiply-adds of the nearest-neighbour search: every query against the whole collection
    (exact), or against nprobe of nlist lists after assigning every training row to a list and
    training the lists (IVF)."""
    kind = str(block.get("index") or "auto")
    if kind == "auto":
        kind = "flat" if collection <= AUTO_FLAT_MAX else "ivf"
    if kind == "flat":
        return float(queries) * collection * width
    nlist = min(int(block.get("nlist") or 1), max(collection, 1))
    nprobe = min(int(block.get("nprobe") or 1), nlist)
    trained = min(collection, IVF_POINTS_PER_LIST * nlist) * nlist * width * IVF_ITERATIONS
    assigned = float(collection + queries) * nlist * width
    return trained + assigned + float(queries) * collection * width * nprobe / nlist


def _overlap(
    values: Mapping[str, Any],
    rates: Rates,
    plan: Plan,
    testsets: Mapping[str, sizes.SetSize],
    project: Path,
    given: Mapping[str, int],
) -> None:
    """The detector embeds the training collection and the planted copies (once, one job; the test
    sets are its zero-shot embeddings), then faiss searches on the CPU."""
    block = _block(values, "overlap")
    train = block.get("train") or {}
    detector = str(block.get("detector"))
    entry = (values.get("models") or {}).get(detector)
    if not isinstance(entry, Mapping):
        raise VlstressError(f"overlap.detector {detector!r} is not a key of models")
    arch = arch_cost(str(entry.get("arch")))
    collection = sizes.collection_size(train, plan.dataset, project, given)
    if collection.images is None:
        plan.notes.append(
            f"overlap: the training collection's size is unknown ({collection.source}); its "
            f"embedding and search are not priced: give it with --size {sizes.COLLECTION}=N"
        )
        return
    n = collection.images
    copies = min(int(block.get("planted") or 0), n) * PLANTED_TRANSFORMS
    names = [str(name) for name in block.get("testsets") or []]
    unknown = [name for name in names if name not in testsets]
    if unknown:
        raise VlstressError(f"overlap.testsets: {', '.join(unknown)} not zero-shot test sets")
    queries = sum(testsets[name].images for name in names)
    embedded = 0 if train.get("kind") == "embeddings" else n
    macs = search_macs(queries + copies, n + copies, arch.embed_dim, block)
    plan.shared.append(
        Shared(
            "overlap detection",
            f"{embedded + copies:,} training images and planted copies embedded by {detector} "
            f"({collection.source}); {queries + copies:,} queries searched in "
            f"{n + copies:,} rows ({macs / 1e12:,.1f} T multiply-adds)",
            cpu_s=copies * rates.image_variant_core_s + macs / rates.search_macs_per_core_s,
            arch=arch.arch,
            image_passes=embedded + copies,
            jobs=1,
        )
    )


def _finetune(values: Mapping[str, Any], rates: Rates, plan: Plan) -> None:
    block = _block(values, "finetune")
    base = str((block.get("base") or {}).get("arch"))
    pairs = int(block.get("steps") or 0) * int(block.get("batch_size") or 0)
    pairs *= int(block.get("accumulate") or 1) * int(block.get("nproc") or 1)
    # (name, what, images, texts) of each training job
    jobs: list[tuple[str, str, int, int]] = []
    for name, weights in (block.get("variants") or {}).items():
        images = pairs * (1 + bool((weights or {}).get("w_vc")))  # + the mixed images (VC)
        texts = pairs * (1 + bool((weights or {}).get("w_sc")))  # + the altered captions (SC)
        jobs.append((name, f"{images:,} images and {texts:,} captions", images, texts))
    for name, spec in ((block.get("labelled") or {}).get("variants") or {}).items():
        loss = (spec or {}).get("loss")
        if loss == "flyp":  # one image and one class prompt per pair
            jobs.append(
                (f"{name} ({loss})", f"{pairs:,} images and {pairs:,} class prompts", pairs, pairs)
            )
        else:  # standard: the image tower and a head; the text tower only builds the head
            jobs.append((f"{name} ({loss})", f"{pairs:,} images", pairs, 0))
    for name, what, images, texts in jobs:
        plan.shared.append(
            Shared(
                f"fine-tuning {name}",
                f"{what}, forward and backward ({base})",
                arch=base,
                image_passes=images * rates.gradient_pass,
                texts=texts * rates.gradient_pass,
                jobs=1,
            )
        )


def plan(
    values: Mapping[str, Any],
    on: frozenset[str],
    rates: Rates,
    project: Path = Path("."),
    given: Mapping[str, int] | None = None,
) -> Plan:
    """What the params ask for: sizes, work per model, shared work."""
    found = Plan(sizes.dataset_size(_block(values, "dataset"), project))
    _retrieval(values, on, rates, found)
    if "zeroshot" in on:
        _zeroshot(values, on, rates, found, project, given or {})
    if "finetune" in on:
        _finetune(values, rates, found)
    return found


def estimate(
    values: Mapping[str, Any],
    on: frozenset[str],
    rates: Rates,
    gpus: int,
    cpus: int,
    project: Path = Path("."),
    given: Mapping[str, int] | None = None,
    extra_archs: Mapping[str, ArchCost] | None = None,
    text_suites: frozenset[str] = frozenset(),
) -> Estimate:
    """The cost of every model of the params and of the shared work; `text_suites`, the suites a
    model without a text tower takes no part in (their stages' `model_kinds`)."""
    if gpus < 1:
        raise VlstressError(f"the number of GPUs must be at least 1, not {gpus}")
    if cpus < 1:
        raise VlstressError(f"the number of CPU cores must be at least 1, not {cpus}")
    models = _block(values, "models")
    if not models:
        raise VlstressError("the params name no model")
    # an assistant generates answers (no embedding pass): not priced by the GFLOPs table
    assistants = sorted(
        slug
        for slug, entry in models.items()
        if model_kind(str((entry or {}).get("arch"))) == LLAVA
    )
    models = {slug: entry for slug, entry in models.items() if slug not in assistants}
    reference = arch_cost(rates.reference_arch, extra_archs)
    archs = {
        slug: arch_cost(str((entry or {}).get("arch")), extra_archs)
        for slug, entry in models.items()
    }
    found = plan(values, on, rates, project, given)
    costs = []
    for slug, arch in archs.items():
        images_s, captions_s = arch_rates(arch, reference, rates)
        # a model without a text tower takes no part in the suites that need one (0 s there)
        work = [w for w in found.work if arch.text_gflops or w.suite not in text_suites]
        gpu_s = {w.suite: 0.0 for w in found.work}
        gpu_s.update({w.suite: w.image_passes / images_s + w.texts / captions_s for w in work})
        gpu_s[STARTUP] = sum(w.jobs for w in work) * rates.startup_s
        rows = sum(w.images + w.text_rows for w in work)  # a classifier map's rows are rows too
        costs.append(
            ModelCost(
                slug,
                arch.arch,
                images_s,
                captions_s,
                gpu_s,
                rows,
                arch.embed_dim,
                arch.image_gflops,
            )
        )
    shared = []
    for item in found.shared:
        if item.arch is not None:
            item = item.priced(
                *arch_rates(arch_cost(item.arch, extra_archs), reference, rates), rates.startup_s
            )
        shared.append(item)
    notes = list(found.notes)
    if assistants and "assistant" in on:
        asked = [
            found.sets[name]
            for name in _block(values, "assistant").get("testsets") or []
            if name in found.sets
        ]
        notes.append(
            f"not priced: the assistant(s) {', '.join(assistants)}, "
            f"{sum(s.images for s in asked):,} questions each (generation; docs/models.md gives "
            "measured questions per second)"
        )
    if any(w.upper_bound for w in found.work):
        notes.append(
            "an attack marked as an upper bound stops early on the images it fooled; the "
            "figure assumes it fools none"
        )
    busy = rates.gpu_utilisation_percent
    if busy and busy < 90 and any(m.images_per_s < rates.images_per_s for m in costs):
        notes.append(
            f"the measured path kept the GPU {busy:g}% busy (decoding bound): scaling its time by "
            f"GFLOPs prices larger architectures high, by up to {100 / busy:.1f}x for one whose "
            "forward is the bottleneck"
        )
    published = [s.name for s in found.sets.values() if s.published]
    if found.dataset.published:
        published.append(found.dataset.name)
    if published:
        notes.append(f"published sizes, not counted here: {', '.join(published)}")
    return Estimate(
        list(found.sets.values()),
        found.dataset,
        found.work,
        shared,
        costs,
        rates,
        gpus,
        cpus,
        notes,
    )


def rounds(models: int, gpus: int) -> int:
    """Rounds of model jobs when every GPU takes one model at a time."""
    return math.ceil(models / gpus)
