"""The NES attack (Ilyas et al. 2018, "Black-box Adversarial Attacks with Limited Queries and
Information"): projected gradient ascent on the cross-entropy of the true class, with the gradient
estimated from scores alone by natural evolution strategies.

The estimate (their Algorithm 1) draws `samples / 2` Gaussian directions u and queries the model
at x + sigma u and x - sigma u (antithetic pairs):
    g = sum (F(x + sigma u) - F(x - sigma u)) u / (samples * sigma).
Queries are counted per image (`NES.queries` after a call), and the budget is a hard limit. An
image is checked first (one query: does it already fool the model?); each step then costs `samples`
queries for the estimate and one more to check the image it made. An image stops at the first check
that it fools the model, or when the next step and the check after it would pass the budget, so no
image ever spends more than the budget: an image that is never fooled takes
`steps_within(budget, samples)` = (budget - 1) // (samples + 1) steps and spends
1 + steps * (samples + 1) queries, within `samples` of the budget.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache


def nes_gradient(
    loss: Callable, x, *, samples: int, sigma: float, max_batch_size: int, generator=None
):
    """NES estimate of the gradient of `loss` (a batch of inputs -> one value per input) at each
    row of `x`, from `samples` queries per row (antithetic pairs; `samples` even)."""
    import torch

    if samples < 2 or samples % 2:
        raise ValueError(f"NES needs an even number of samples >= 2, got {samples}")
    pairs = samples // 2
    u = torch.randn(
        (pairs, *x.shape), generator=generator, device=x.device, dtype=x.dtype
    )  # pairs x N x C x H x W
    probes = torch.cat([x.unsqueeze(0) + sigma * u, x.unsqueeze(0) - sigma * u])
    flat = probes.reshape(-1, *x.shape[1:])
    values = torch.cat(
        [loss(flat[i : i + max_batch_size], i) for i in range(0, len(flat), max_batch_size)]
    ).reshape(2 * pairs, len(x))
    difference = values[:pairs] - values[pairs:]  # pairs x N
    weights = difference.view(pairs, len(x), *([1] * (x.dim() - 1)))
    return (weights * u).sum(dim=0) / (samples * sigma)


def steps_within(budget: int, samples: int) -> int:
    """The NES steps a query budget allows: the first check (1 query), then per step `samples`
    queries and the check after it (`samples` + 1), all within `budget`."""
    return max(0, (int(budget) - 1) // (int(samples) + 1))


@cache
def attack_class():
    """The NES attack as a torchattacks Attack (so `run_attack` treats it like the others); built
    on first use, as torchattacks is imported only by the steps that attack."""
    from vlstress.suites.adversarial.attacks import _torchattacks

    class NES(_torchattacks().attack.Attack):
        """Query-limited NES + PGD on the cross-entropy; L-inf (sign step) or L2 (unit step)."""

        def __init__(
            self,
            model,
            norm: str = "linf",
            eps: float = 4 / 255,
            alpha: float = 1 / 255,
            queries: int = 1000,
            samples: int = 50,
            sigma: float = 0.001,
            max_batch_size: int = 64,
        ):
            super().__init__("NES", model)
            if queries < 1:
                raise ValueError(
                    f"NES needs a query budget of at least 1 (the first check), got {queries}"
                )
            self.norm, self.eps, self.alpha, self.budget = norm, eps, alpha, queries
            self.samples, self.sigma, self.max_batch_size = samples, sigma, max_batch_size
            self.supported_mode = ["default"]
            self.queries = None  # per image of the last call

        def forward(self, images, labels):
            import torch

            images = images.clone().detach().to(self.device)
            labels = labels.clone().detach().to(self.device)
            adv = images.clone()
            queries = torch.zeros(len(images), dtype=torch.long)
            active = torch.ones(len(images), dtype=torch.bool)
            with torch.no_grad():
                while True:
                    index = torch.nonzero(active).flatten()
                    if len(index) == 0:
                        break
                    logits = self.get_logits(adv[index])  # one query: fooled yet?
                    queries[index] += 1
                    fooled = logits.argmax(dim=1) != labels[index]
                    # the next step's samples and the check after it must fit the budget
                    out_of_budget = queries[index] + self.samples + 1 > self.budget
                    stop = fooled.cpu() | out_of_budget
                    active[index[stop]] = False
                    index = index[~stop]
                    if len(index) == 0:
                        break
                    targets = labels[index]

                    def loss(batch, start, targets=targets):
                        rows = (torch.arange(len(batch), device=batch.device) + start) % len(
                            targets
                        )
                        return torch.nn.functional.cross_entropy(
                            self.get_logits(batch).float(), targets[rows], reduction="none"
                        )

                    grad = nes_gradient(
                        loss,
                        adv[index],
                        samples=self.samples,
                        sigma=self.sigma,
                        max_batch_size=self.max_batch_size,
                    )
                    queries[index] += self.samples
                    adv[index] = self._step(adv[index], grad, images[index])
            self.queries = queries
            return adv.detach()

        def _step(self, adv, grad, images):
            import torch

            if self.norm == "linf":
                adv = adv + self.alpha * grad.sign()
                adv = torch.min(torch.max(adv, images - self.eps), images + self.eps)
            else:
                flat = grad.flatten(1).norm(dim=1).clamp_min(1e-12)
                adv = adv + self.alpha * grad / flat.view(-1, *([1] * (grad.dim() - 1)))
                delta = adv - images
                scale = (self.eps / delta.flatten(1).norm(dim=1).clamp_min(1e-12)).clamp(max=1.0)
                adv = images + delta * scale.view(-1, *([1] * (delta.dim() - 1)))
            return adv.clamp(0.0, 1.0)

    return NES
