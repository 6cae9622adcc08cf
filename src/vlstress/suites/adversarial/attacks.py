"""Adversarial attacks on a zero-shot classifier, through `torchattacks`.

The attacked function is pixels in [0, 1] -> the model's own normalisation -> `encode_image`
-> L2 normalisation -> `logit_scale * cos(image, class weights)` (`PixelZeroShot`), so
perturbations live in pixel space after the model's resize and centre crop, and `eps` is
given in 1/255 units of the attack's norm (L-inf or L2), as papers report it.

Attack kinds (registry `KINDS`; torchattacks class in brackets): fgsm [FGSM], bim [BIM],
pgd [PGD / PGDL2 by norm], mifgsm [MIFGSM], difgsm [DIFGSM], deepfool [DeepFool], spsa [SPSA],
square [Square], autoattack [AutoAttack, version "standard": APGD-CE, APGD-T, FAB-T, Square],
nes [NES, Ilyas et al. 2018: vlstress.suites.adversarial.nes, this project's torchattacks Attack].
Every attack's queries are counted: model evaluations per image, gradient passes included
(`query_counter`); for the score-based kinds (spsa, square, nes) that is the cost papers report.
DeepFool is a minimal-perturbation attack with no budget: at a given eps an image counts as
broken only when DeepFool fooled the model with a perturbation whose norm is within eps.

Determinism: every (eps, restart, batch) seeds torch's RNG from the attack seed; Square and
AutoAttack get the seed as their own argument.
"""

from __future__ import annotations

import inspect
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from vlstress.errors import VlstressError

NORMS = ("linf", "l2")


@dataclass(frozen=True)
class AttackSpec:
    """One attack entry of params (`adversarial.attacks.<name>`)."""

    name: str
    kind: str
    norm: str = "linf"
    eps: tuple[float, ...] = (4.0,)  # in 1/255 units of the norm
    steps: int | None = None  # iterations (Square: queries); None = the kind's default
    alpha: float | None = None  # step size in 1/255 units; None = the kind's default
    # random restarts (kinds with a random start): per image, the first that fools the model
    restarts: int = 1
    # more keyword arguments of the torchattacks class
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class AttackKind:
    # (model, spec, eps as a fraction of 1, n_classes, seed) -> torchattacks.Attack
    build: Callable[..., Any]
    norms: tuple[str, ...]
    description: str
    # False: minimal-perturbation attack (no budget), scored against each eps afterwards
    bounded: bool = True
    random_start: bool = False  # restarts make sense
    default_steps: int | None = 10
    black_box: bool = False  # scores only, no gradient: its queries are the cost reported
    needs_budget: bool = False  # steps (the query budget) must be given


def _alpha(spec: AttackSpec, eps: float, steps: int) -> float:
    """The step size: given, or 2.5 * eps / steps (Madry et al.), in [0, 1] pixel units."""
    return spec.alpha / 255.0 if spec.alpha is not None else 2.5 * eps / max(steps, 1)


def _steps(spec: AttackSpec, kind: AttackKind) -> int:
    return spec.steps if spec.steps is not None else int(kind.default_steps or 1)


def _torchattacks():
    try:
        import torchattacks
    except ImportError:
        raise VlstressError(
            "the adversarial suite needs torchattacks: `make install` installs it "
            "(pip install --no-deps -c constraints.txt torchattacks; see README, Installation)"
        ) from None
    return torchattacks


def _fgsm(model, spec, eps, n_classes, seed):
    return _torchattacks().FGSM(model, eps=eps, **spec.extra)


def _bim(model, spec, eps, n_classes, seed):
    steps = _steps(spec, KINDS["bim"])
    return _torchattacks().BIM(
        model, eps=eps, alpha=_alpha(spec, eps, steps), steps=steps, **spec.extra
    )


def _pgd(model, spec, eps, n_classes, seed):
    ta = _torchattacks()
    steps = _steps(spec, KINDS["pgd"])
    cls = ta.PGD if spec.norm == "linf" else ta.PGDL2
    return cls(
        model, eps=eps, alpha=_alpha(spec, eps, steps), steps=steps, random_start=True, **spec.extra
    )


def _mifgsm(model, spec, eps, n_classes, seed):
    steps = _steps(spec, KINDS["mifgsm"])
    return _torchattacks().MIFGSM(
        model, eps=eps, alpha=_alpha(spec, eps, steps), steps=steps, **spec.extra
    )


def _difgsm(model, spec, eps, n_classes, seed):
    steps = _steps(spec, KINDS["difgsm"])
    return _torchattacks().DIFGSM(
        model, eps=eps, alpha=_alpha(spec, eps, steps), steps=steps, **spec.extra
    )


def _deepfool(model, spec, eps, n_classes, seed):
    return _torchattacks().DeepFool(model, steps=_steps(spec, KINDS["deepfool"]), **spec.extra)


def _spsa(model, spec, eps, n_classes, seed):
    options = {"nb_sample": 128, "max_batch_size": 64, **spec.extra}
    return _torchattacks().SPSA(model, eps=eps, nb_iter=_steps(spec, KINDS["spsa"]), **options)


def _square(model, spec, eps, n_classes, seed):
    norm = "Linf" if spec.norm == "linf" else "L2"
    return _torchattacks().Square(
        model,
        norm=norm,
        eps=eps,
        n_queries=_steps(spec, KINDS["square"]),
        n_restarts=spec.restarts,
        seed=seed,
        **spec.extra,
    )


NES_OPTIONS = {"samples": 50, "sigma": 0.001, "max_batch_size": 64}  # Ilyas et al. 2018


def nes_iterations(spec: AttackSpec) -> int:
    """Steps of NES within the query budget: a first check, then per step `samples` queries + 1 to
    check the image it made (`nes.steps_within`)."""
    from vlstress.suites.adversarial.nes import steps_within

    samples = int({**NES_OPTIONS, **spec.extra}["samples"])
    return steps_within(int(spec.steps or 0), samples)


def _nes(model, spec, eps, n_classes, seed):
    from vlstress.suites.adversarial.nes import attack_class

    options = {**NES_OPTIONS, **spec.extra}
    return attack_class()(
        model,
        norm=spec.norm,
        eps=eps,
        alpha=_alpha(spec, eps, nes_iterations(spec)),
        queries=int(spec.steps),
        **options,
    )


def _autoattack(model, spec, eps, n_classes, seed):
    norm = "Linf" if spec.norm == "linf" else "L2"
    return _torchattacks().AutoAttack(
        model, norm=norm, eps=eps, version="standard", n_classes=n_classes, seed=seed, **spec.extra
    )


KINDS: dict[str, AttackKind] = {
    "fgsm": AttackKind(
        _fgsm, ("linf",), "fast gradient sign method (one step)", default_steps=None
    ),
    "bim": AttackKind(_bim, ("linf",), "basic iterative method (iterative FGSM, no random start)"),
    "pgd": AttackKind(
        _pgd, NORMS, "projected gradient descent with a random start", random_start=True
    ),
    "mifgsm": AttackKind(_mifgsm, ("linf",), "momentum iterative FGSM (MIM)"),
    "difgsm": AttackKind(_difgsm, ("linf",), "diverse-input iterative FGSM (DIM)"),
    "deepfool": AttackKind(
        _deepfool,
        ("l2", "linf"),
        "DeepFool minimal perturbation, scored against each eps",
        bounded=False,
        default_steps=50,
    ),
    "spsa": AttackKind(
        _spsa,
        ("linf",),
        "SPSA gradient-free attack (query based)",
        random_start=True,
        default_steps=10,
        black_box=True,
    ),
    "square": AttackKind(
        _square,
        NORMS,
        "Square attack (score based, random search; steps = queries)",
        default_steps=1000,
        black_box=True,
    ),
    "nes": AttackKind(
        _nes,
        NORMS,
        "NES gradient estimation + PGD (Ilyas et al. 2018; score based; steps = query budget)",
        default_steps=None,
        black_box=True,
        needs_budget=True,
    ),
    "autoattack": AttackKind(
        _autoattack,
        NORMS,
        "AutoAttack, standard version (APGD-CE, APGD-T, FAB-T, Square)",
        default_steps=None,
    ),
}

# torchattacks constructor arguments set by vlstress from the spec, never through `extra`
RESERVED = {
    "model",
    "eps",
    "alpha",
    "steps",
    "norm",
    "n_queries",
    "n_restarts",
    "seed",
    "n_classes",
    "version",
    "nb_iter",
    "random_start",
    "queries",
}


def check_spec(spec: AttackSpec) -> None:
    """Validate an attack entry before any model is loaded; errors name the attack."""
    where = f"attack {spec.name!r}"
    if spec.kind not in KINDS:
        from difflib import get_close_matches

        close = get_close_matches(spec.kind, list(KINDS), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise VlstressError(f"{where}: unknown kind {spec.kind!r}{hint}; known: {', '.join(KINDS)}")
    kind = KINDS[spec.kind]
    if spec.norm not in kind.norms:
        raise VlstressError(
            f"{where}: kind {spec.kind} supports norm {' or '.join(kind.norms)}, not {spec.norm!r}"
        )
    if not spec.eps or any(not np.isfinite(e) or e < 0 for e in spec.eps):
        raise VlstressError(
            f"{where}: eps must be a non-empty list of numbers >= 0 (1/255 units), got "
            f"{list(spec.eps)}"
        )
    if spec.steps is not None and spec.steps < 1:
        raise VlstressError(f"{where}: steps must be >= 1, got {spec.steps}")
    if kind.needs_budget and spec.steps is None:
        raise VlstressError(
            f"{where}: {spec.kind} is a query-limited attack and has no query budget: set steps "
            "to the queries allowed per image (e.g. 1000)"
        )
    if spec.alpha is not None and not spec.alpha > 0:
        raise VlstressError(f"{where}: alpha must be > 0 (1/255 units), got {spec.alpha}")
    if spec.restarts < 1:
        raise VlstressError(f"{where}: restarts must be >= 1, got {spec.restarts}")
    reserved = sorted(set(spec.extra) & RESERVED)
    if reserved:
        raise VlstressError(
            f"{where}: extra option(s) {', '.join(reserved)} are set from the attack's own fields"
        )
    if spec.kind == "nes":
        _check_nes(spec, where)
    if spec.extra:
        accepted = _accepted_options(spec)
        unknown = sorted(set(spec.extra) - accepted)
        if unknown:
            raise VlstressError(
                f"{where}: unknown extra option(s) {', '.join(unknown)} for {spec.kind}; "
                f"accepted: {', '.join(sorted(accepted - RESERVED))}"
            )


def _check_nes(spec: AttackSpec, where: str) -> None:
    options = {**NES_OPTIONS, **spec.extra}
    samples, sigma = options["samples"], options["sigma"]
    if not isinstance(samples, int) or samples < 2 or samples % 2:
        raise VlstressError(
            f"{where}: nes samples must be an even integer >= 2 (antithetic pairs), got {samples!r}"
        )
    if not isinstance(sigma, (int, float)) or not sigma > 0:
        raise VlstressError(f"{where}: nes sigma must be a number > 0, got {sigma!r}")
    if nes_iterations(spec) < 1:
        raise VlstressError(
            f"{where}: a query budget of {spec.steps} is less than one NES step "
            f"(1 check + {samples} samples + 1 check = {samples + 2} queries)"
        )


def _accepted_options(spec: AttackSpec) -> set[str]:
    ta = _torchattacks()
    classes = {
        "fgsm": ta.FGSM,
        "bim": ta.BIM,
        "pgd": ta.PGD if spec.norm == "linf" else ta.PGDL2,
        "mifgsm": ta.MIFGSM,
        "difgsm": ta.DIFGSM,
        "deepfool": ta.DeepFool,
        "spsa": ta.SPSA,
        "square": ta.Square,
        "autoattack": ta.AutoAttack,
    }
    if spec.kind == "nes":
        from vlstress.suites.adversarial.nes import attack_class

        return set(inspect.signature(attack_class().__init__).parameters) - {"self"}
    return set(inspect.signature(classes[spec.kind].__init__).parameters) - {"self"}


def parse_extra(text: str | None) -> dict[str, Any]:
    """`decay=1.0,nb_sample=32` -> {"decay": 1.0, "nb_sample": 32} (ints, floats, true/false, else
    text)."""
    if text is None or not text.strip():
        return {}
    out: dict[str, Any] = {}
    for part in str(text).split(","):
        key, sep, value = part.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not key or not value:
            raise VlstressError(
                f"extra attack options must be key=value pairs separated by commas, got {text!r}"
            )
        out[key] = _option_value(value)
    return out


def _option_value(text: str) -> Any:
    lowered = text.lower()
    if lowered in {"true", "false"}:
        return lowered == "true"
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


# ------------------------------------------------------------------ the attacked function


def pixel_pipeline(preprocess) -> tuple[Callable, tuple[float, ...], tuple[float, ...]]:
    """Split open_clip's eval transform into (PIL -> [0, 1] pixels at the model's input size, mean,
    std)."""
    from torchvision import transforms as T

    steps = list(getattr(preprocess, "transforms", []))
    norms = [t for t in steps if isinstance(t, T.Normalize)]
    if len(norms) != 1 or steps[-1] is not norms[0]:
        raise VlstressError(
            "the model's preprocessing does not end with one Normalize: cannot attack in pixel "
            "space"
        )
    return (
        T.Compose(steps[:-1]),
        tuple(float(v) for v in norms[0].mean),
        tuple(float(v) for v in norms[0].std),
    )


def pixel_zero_shot(
    model,
    weights: np.ndarray,
    mean: Sequence[float],
    std: Sequence[float],
    logit_scale: float,
    device: str,
    precision: str = "fp32",
    classifier_meta: dict[str, Any] | None = None,
):
    """The torch module attacked: [0, 1] pixels -> zero-shot logits (the image tower under
    `precision`, logits in fp32). `classifier_meta`, the classifier's sidecar, says how its
    weights score (a timm model's class map: vlstress.suites.zeroshot.classifier.torch_scores)."""
    import torch

    from vlstress.embedding.precision import autocast
    from vlstress.suites.zeroshot.classifier import torch_scores

    autocast(precision, device)  # checks amp against the device now, not at the first forward

    class PixelZeroShot(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model
            self.register_buffer(
                "weights", torch.as_tensor(weights, dtype=torch.float32, device=device)
            )
            self.register_buffer(
                "mean", torch.tensor(mean, dtype=torch.float32, device=device).view(1, -1, 1, 1)
            )
            self.register_buffer(
                "std", torch.tensor(std, dtype=torch.float32, device=device).view(1, -1, 1, 1)
            )
            self.logit_scale = float(logit_scale)
            # attacks differentiate with respect to the pixels only
            self.model.requires_grad_(False)

        def forward(self, pixels):
            with autocast(precision, device):
                features = self.model.encode_image((pixels - self.mean) / self.std)
            return self.logit_scale * torch_scores(features, self.weights, classifier_meta or {})

    return PixelZeroShot().eval()


# ------------------------------------------------------------------ running an attack


def query_counter(module):
    """`module` behind a counter of the images it is evaluated on (`.rows`): the attacks are built
    on it, so every forward pass of an attack, gradient passes included, counts as a query."""
    import torch

    class QueryCounter(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.module = module
            self.rows = 0

        def forward(self, pixels):
            self.rows += int(pixels.shape[0])
            return self.module(pixels)

    return QueryCounter().eval()


def _seed(*parts: Any) -> int:
    """A 31-bit seed from the parts (stable across runs and machines)."""
    return zlib.crc32(repr(parts).encode("utf-8")) & 0x7FFFFFFF


def norms(delta) -> tuple[np.ndarray, np.ndarray]:
    """(L-inf, L2) norm of each image's perturbation, in 1/255 units."""
    flat = delta.detach().reshape(delta.shape[0], -1).double().cpu()
    return (255.0 * flat.abs().max(dim=1).values).numpy(), (255.0 * flat.norm(dim=1)).numpy()


@dataclass
class EpsResult:
    eps: float
    correct: np.ndarray  # bool per image: still classified right under attack at this eps
    linf: np.ndarray  # per image, 1/255 units
    l2: np.ndarray
    queries: float = 0.0  # mean model evaluations per image of the sample (restarts included)
    # per image, for attacks that count their own (nes); None for the others
    image_queries: np.ndarray | None = None


def run_attack(
    module,
    spec: AttackSpec,
    pixels,
    labels,
    *,
    n_classes: int,
    seed: int,
    batch_size: int,
    progress: bool = True,
) -> tuple[np.ndarray, list[EpsResult]]:
    """(clean correct per image, one EpsResult per eps of the spec) for `pixels` (N x 3 x H x W in
    [0, 1])."""
    import torch
    from tqdm.auto import tqdm

    check_spec(spec)
    kind = KINDS[spec.kind]
    device = next(module.parameters()).device
    labels = torch.as_tensor(np.asarray(labels), dtype=torch.long)
    with torch.no_grad():
        clean = (
            np.concatenate(
                [
                    module(pixels[i : i + batch_size].to(device)).argmax(dim=1).cpu().numpy()
                    for i in range(0, len(pixels), batch_size)
                ]
            )
            == labels.numpy()
        )
    budgets = list(spec.eps) if kind.bounded else [None]
    adversarial, spent, spent_per_image = {}, {}, {}
    counter = query_counter(module)
    for budget in budgets:
        counter.rows = 0
        per_image = np.zeros(len(pixels), dtype=np.int64)
        restarts = spec.restarts if kind.random_start else 1
        adv = pixels.clone()
        fooled = np.zeros(len(pixels), dtype=bool)
        eps_label = "min-norm" if budget is None else f"eps {budget:g}/255"
        bar = tqdm(
            total=restarts * len(pixels),
            desc=f"{spec.name} {eps_label}",
            unit="img",
            disable=not progress,
        )
        for restart in range(restarts):
            attack_seed = _seed(seed, spec.name, budget, restart)
            attack = kind.build(
                counter, spec, 0.0 if budget is None else budget / 255.0, n_classes, attack_seed
            )
            for start in range(0, len(pixels), batch_size):
                rows = slice(start, start + batch_size)
                todo = ~fooled[rows]
                if todo.any():
                    torch.manual_seed(_seed(attack_seed, start))
                    x = pixels[rows][torch.from_numpy(todo)].to(device)
                    y = labels[rows][torch.from_numpy(todo)].to(device)
                    candidate = attack(x, y).detach()
                    with torch.no_grad():
                        fools = (module(candidate).argmax(dim=1) != y).cpu().numpy()
                    index = np.flatnonzero(todo) + start
                    adv[index] = candidate.cpu()
                    fooled[index] |= fools
                    if getattr(attack, "queries", None) is not None:
                        per_image[index] += attack.queries.cpu().numpy()
                bar.update(len(pixels[rows]))
        bar.close()
        adversarial[budget] = adv
        spent[budget] = counter.rows / len(pixels)
        spent_per_image[budget] = per_image if per_image.any() else None
    results = []
    for eps in spec.eps:
        adv = adversarial[eps if kind.bounded else None]
        with torch.no_grad():
            predicted = np.concatenate(
                [
                    module(adv[i : i + batch_size].to(device)).argmax(dim=1).cpu().numpy()
                    for i in range(0, len(adv), batch_size)
                ]
            )
        linf, l2 = norms(adv - pixels)
        correct = predicted == labels.numpy()
        if not kind.bounded:  # fooled beyond the budget does not count
            within = (linf if spec.norm == "linf" else l2) <= eps + 1e-6
            correct = correct | ~within
        key = eps if kind.bounded else None
        results.append(EpsResult(float(eps), correct, linf, l2, spent[key], spent_per_image[key]))
    return clean, results


def attack_metrics(clean: np.ndarray, result: EpsResult) -> dict[str, float | None]:
    """Percent metrics of one eps: clean and robust top-1, drop, attack success rate, perturbation
    norms (1/255), and `queries`: model evaluations per image (mean over the sample)."""
    clean = np.asarray(clean, dtype=bool)
    robust = np.asarray(result.correct, dtype=bool)
    n_clean = int(clean.sum())
    top1, robust_top1 = 100.0 * float(clean.mean()), 100.0 * float(robust.mean())
    return {
        "top1_clean": top1,
        "robust_top1": robust_top1,
        "drop": top1 - robust_top1,
        "attack_success": 100.0 * float((clean & ~robust).sum()) / n_clean if n_clean else None,
        "mean_linf": float(result.linf.mean()),
        "max_linf": float(result.linf.max()),
        "mean_l2": float(result.l2.mean()),
        "max_l2": float(result.l2.max()),
        "queries": float(result.queries),
    }


def subset(n_total: int, n_images: int | None, seed: int) -> np.ndarray:
    """Sorted rows of a seeded sample of `n_images` images (all when None or larger than the
    set)."""
    if n_images is None or n_images >= n_total:
        return np.arange(n_total)
    return np.sort(np.random.default_rng(seed).choice(n_total, size=n_images, replace=False))
