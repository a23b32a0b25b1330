"""Stage B: fit p_alpha to the frozen supernet by the ELBO (eq. 5.4, §5.3.3).

With the weights theta* fixed ("post-training"), each step draws one architecture by the
straight-through Gumbel-softmax, takes the cross-entropy of the supernet under it on a
batch of the selection split (a one-sample estimate of -E[log p(D|A)] per example), adds
``kl_weight`` * KL[p_alpha || uniform] (A3: 1 / |D_sel|, a per-example ELBO), and steps
alpha with Adam. The forward is GDAS-style by default (A4): the one-hot sample runs only
its path, scaled by the straight-through weight, so one step costs one path.
BatchNorm uses batch statistics and writes none (A14).
"""

from __future__ import annotations

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

#: Called after each epoch with (epoch, mean NLL, KL, the posterior so far).
EpochCallback = Callable[[int, float, float, ArchPosterior], None]


def fit_posterior(
    supernet: nn.Module,
    encoding: ArchEncoding,
    data: TensorData,
    config: NesbsConfig,
    generator: torch.Generator,
    *,
    on_epoch: EpochCallback | None = None,
) -> ArchPosterior:
    """alpha* for the frozen ``supernet`` on ``data`` (alpha starts at 0: the uniform prior)."""
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
    try:
        with batch_norm_mode(supernet, "batch"):
            for epoch in range(config.posterior_epochs):
                nll_sum, seen = 0.0, 0
                kl = torch.zeros(())
                batches = iterate_batches(x_all, y_all, config.batch_size, generator=generator)
                for b, (x, y) in enumerate(batches):
                    if config.max_batches is not None and b >= config.max_batches:
                        break
                    rows = straight_through_sample(alpha, mask, generator, tau=config.gumbel_tau)
                    logits = supernet(x, encoding.edge_weights(rows), sparse=config.single_path)
                    nll = F.cross_entropy(logits, y)
                    kl = kl_to_uniform(alpha, mask)
                    loss = nll + kl_weight * kl
                    opt.zero_grad(set_to_none=True)
                    loss.backward()
                    opt.step()
                    nll_sum += float(nll.detach()) * x.shape[0]
                    seen += x.shape[0]
                if on_epoch is not None:
                    posterior = ArchPosterior(encoding, alpha, tau=config.tau)
                    on_epoch(
                        epoch, nll_sum / max(seen, 1) if seen else math.nan, float(kl.detach()), posterior
                    )
    finally:
        for p, flag in flags:
            p.requires_grad_(flag)
    return ArchPosterior(encoding, alpha, tau=config.tau)
