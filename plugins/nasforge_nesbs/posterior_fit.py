"""Stage B: fit p_alpha to the frozen supernet by the ELBO (eq. 5.4, §5.3.3).

With the weights theta* fixed ("post-training"), each step draws one architecture by the
straight-through Gumbel-softmax, takes the cross-entropy of the supernet under it on a
batch of the selection split (a one-sample estimate of -E[log p(D|A)] per example), adds
``kl_weight`` * KL[p_alpha || uniform] (1 / |D_sel|, a per-example ELBO, our choice), and steps
alpha with Adam. The forward is GDAS-style by default (our reading): the one-hot sample runs only
its path, scaled by the straight-through weight, so one step costs one path.
BatchNorm uses batch statistics and writes none (our choice).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

from nasforge.kernel.datasets import TensorData
from nasforge.run.training import iterate_batches
from nasforge.tools.backends import batch_norm_mode
from nasforge_nesbs.config import NesbsConfig
from nasforge_nesbs.decisions import ArchEncoding
from nasforge_nesbs.posterior import ArchPosterior, kl_to_uniform, straight_through_sample

#: Called at each report (every epoch, or every 1/20 of a budget in steps) with (report
#: index, mean NLL since the last report, KL, the posterior so far).
EpochCallback = Callable[[int, float, float, ArchPosterior], None]

#: Reports of a posterior fit counted in steps (one per epoch would be hundreds on small data).
REPORTS = 20
#: Entropy above this share of the uniform prior's is "near uniform" (warned about).
NEAR_UNIFORM = 0.95

log = logging.getLogger("nasforge.nesbs")


def fit_posterior(
    supernet: nn.Module,
    encoding: ArchEncoding,
    data: TensorData,
    config: NesbsConfig,
    generator: torch.Generator,
    *,
    on_epoch: EpochCallback | None = None,
) -> ArchPosterior:
    """alpha* for the frozen ``supernet`` on ``data`` (alpha starts at 0: the uniform prior),
    fitted for ``config.posterior_steps`` Adam steps (or ``config.posterior_epochs`` passes).

    The fitted posterior's entropy is logged beside the uniform prior's, with a warning
    when it stays near uniform: then the sampler draws nearly uniform architectures and
    NESBS is no better than its URS baseline whatever the supernet knows.
    """
    device = torch.device(config.device)
    flags = [(p, p.requires_grad) for p in supernet.parameters()]
    for p, _ in flags:
        p.requires_grad_(False)
    alpha = torch.zeros((len(encoding), encoding.max_size), device=device, requires_grad=True)
    mask = encoding.mask.to(device)
    opt = torch.optim.Adam(
        [alpha], lr=config.posterior_lr, betas=(0.9, 0.999), weight_decay=config.posterior_weight_decay
    )
    kl_weight = config.kl_weight if config.kl_weight is not None else 1.0 / max(1, len(data))
    x_all, y_all = data.x.to(device), data.y.to(device)
    epochs, budget = _schedule(config, len(data))
    every = 1 if config.posterior_epochs is not None else max(1, math.ceil(epochs / REPORTS))
    step, report = 0, 0
    try:
        with batch_norm_mode(supernet, "batch"):
            nll_sum, seen = 0.0, 0
            kl = torch.zeros(())
            for epoch in range(epochs):
                batches = iterate_batches(x_all, y_all, config.batch_size, generator=generator)
                for b, (x, y) in enumerate(batches):
                    if (config.max_batches is not None and b >= config.max_batches) or step >= budget:
                        break
                    rows = straight_through_sample(alpha, mask, generator, tau=config.gumbel_tau)
                    logits = supernet(x, encoding.edge_weights(rows), sparse=config.single_path)
                    nll = F.cross_entropy(logits, y)
                    kl = kl_to_uniform(alpha, mask)
                    loss = nll + kl_weight * kl
                    opt.zero_grad(set_to_none=True)
                    loss.backward()
                    opt.step()
                    step += 1
                    nll_sum += float(nll.detach()) * x.shape[0]
                    seen += x.shape[0]
                last = epoch == epochs - 1 or step >= budget
                if on_epoch is not None and ((epoch + 1) % every == 0 or last):
                    posterior = ArchPosterior(encoding, alpha, tau=config.tau)
                    on_epoch(report, nll_sum / seen if seen else math.nan, float(kl.detach()), posterior)
                    report, nll_sum, seen = report + 1, 0.0, 0
                if step >= budget:
                    break
    finally:
        for p, flag in flags:
            p.requires_grad_(flag)
    posterior = ArchPosterior(encoding, alpha, tau=config.tau)
    warn_if_near_uniform(posterior, step)
    return posterior


def _schedule(config: NesbsConfig, size: int) -> tuple[int, float]:
    """(passes over the data, step budget): the configured epochs with no step limit, or
    enough passes for ``posterior_steps`` steps."""
    if config.posterior_epochs is not None:
        return config.posterior_epochs, math.inf
    per_epoch = config.batches_per_epoch(size)
    return math.ceil(config.posterior_steps / per_epoch), config.posterior_steps


def near_uniform(posterior: ArchPosterior) -> tuple[float, float, bool]:
    """(entropy, the uniform prior's entropy, whether it is above :data:`NEAR_UNIFORM` of it)."""
    entropy = posterior.entropy()
    prior = math.fsum(math.log(s) for s in posterior.encoding.sizes)
    return entropy, prior, prior > 0 and entropy > NEAR_UNIFORM * prior


def warn_if_near_uniform(posterior: ArchPosterior, steps: int) -> None:
    entropy, prior, flat = near_uniform(posterior)
    log.info(
        "NESBS posterior after %d steps: entropy %.3f of the uniform prior's %.3f nats", steps, entropy, prior
    )
    if flat:
        log.warning(
            "the NESBS posterior stays near uniform (entropy %.3f of %.3f nats after %d steps): its "
            "samples are nearly uniform architectures; fit it longer (posterior_steps) or check that "
            "the supernet separates architectures (quality_check)",
            entropy,
            prior,
            steps,
        )
