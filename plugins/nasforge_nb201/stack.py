"""Many NAS-Bench-201 networks as one module: what batched scoring runs on a GPU.

Every NB201 network has the same skeleton and differs only in the op on each of a cell's
six edges, so K networks can share every kernel launch: each convolution becomes a
grouped convolution (``groups=K``) over the K networks' channels side by side, each
BatchNorm one over K*C channels (its statistics are per channel, so per network), and
each edge computes the ops its K networks use there and picks, per channel, the one of
each network with ``torch.where`` (a selection, not a multiplication by a 0/1 mask, so a
non-finite value of an op a network does not use can never reach it). Network ``k``'s
slice of the output is what its own network computes: the arithmetic differs only in
rounding (tested in float64 against the per-network definition).

Each network's weights come from its own stand-alone network, as the space's seeded build
makes it (:meth:`NB201Stack.pack`), so batched scores equal per-network scores by
construction of the weights, not by re-deriving the initialisation. The weights of all K
networks live in one flat arena (each tensor's K copies in one block, network-major), so
one copy moves a whole stack to a device and a sub-stack (cells ``a..b``, for an
out-of-memory split) is a view of the same arena.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, cast

import attrs
import torch
from torch import nn

from nasforge.kernel.genotype import Genotype
from nasforge.tools.scoring import alias
from nasforge_nb201.arch import EDGES, NUM_EDGES, NUM_NODES, OP_NAMES, check_ops
from nasforge_nb201.macro import MacroConfig

NONE, SKIP, CONV1, CONV3, POOL = range(len(OP_NAMES))
_CONV_SLOT = {CONV1: "1", CONV3: "3"}
#: Byte alignment of each tensor block in the arena (any dtype's, and a cache line).
ALIGN = 64


class StackedEdge(nn.Module):
    """One edge for K networks: the ops any of them uses here, each network's picked."""

    def __init__(self, cells: int, channels: int) -> None:
        super().__init__()
        width = cells * channels
        self.relu = nn.ReLU(inplace=False)
        self.conv1 = nn.Conv2d(width, width, 1, bias=False, groups=cells)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, width, 3, padding=1, bias=False, groups=cells)
        self.bn3 = nn.BatchNorm2d(width)
        self.pool = nn.AvgPool2d(3, stride=1, padding=1, count_include_pad=False)
        #: Op indices some network uses here (set by ``arrange``), in OP_NAMES order.
        self.present: tuple[int, ...] = (NONE,)
        #: Per op index, a (width,) bool mask of the channels of the networks that use it.
        self.masks: torch.Tensor | None = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor | None = None
        act: torch.Tensor | None = None
        for op in self.present:
            if op == NONE:
                y = x.mul(0.0)  # as the Zero op: non-finite inputs stay non-finite
            elif op == SKIP:
                y = x
            elif op == POOL:
                y = self.pool(x)
            else:
                act = self.relu(x) if act is None else act
                y = self.bn1(self.conv1(act)) if op == CONV1 else self.bn3(self.conv3(act))
            if out is None:
                out = y
            else:
                assert self.masks is not None
                out = torch.where(self.masks[op].view(1, -1, 1, 1), y, out)
        assert out is not None
        return out


class StackedCell(nn.Module):
    """The NB201 cell for K networks (node sums in the per-network order)."""

    def __init__(self, cells: int, channels: int) -> None:
        super().__init__()
        self.edges = nn.ModuleList(StackedEdge(cells, channels) for _ in range(NUM_EDGES))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        nodes = [x]
        for dst in range(1, NUM_NODES):
            incoming = [self.edges[e](nodes[src]) for e, (d, src) in enumerate(EDGES) if d == dst]
            total = incoming[0]
            for term in incoming[1:]:
                total = total + term
            nodes.append(total)
        return nodes[-1]


class _ReLUConvBN(nn.Sequential):
    def __init__(self, cells: int, c_in: int, c_out: int, kernel: int, stride: int = 1) -> None:
        super().__init__(
            nn.ReLU(inplace=False),
            nn.Conv2d(cells * c_in, cells * c_out, kernel, stride, kernel // 2, bias=False, groups=cells),
            nn.BatchNorm2d(cells * c_out),
        )


class StackedReduction(nn.Module):
    """The residual reduction block for K networks (the same module names as one's)."""

    def __init__(self, cells: int, c_in: int, c_out: int) -> None:
        super().__init__()
        self.conv_a = _ReLUConvBN(cells, c_in, c_out, 3, stride=2)
        self.conv_b = _ReLUConvBN(cells, c_out, c_out, 3)
        self.shortcut = nn.Sequential(
            nn.AvgPool2d(kernel_size=2, stride=2, ceil_mode=True),
            nn.Conv2d(cells * c_in, cells * c_out, 1, bias=False, groups=cells),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.shortcut(x) + self.conv_b(self.conv_a(x))


class StackedNB201(nn.Module):
    """K NAS-Bench-201 networks: ``forward`` maps (B, K, C_in, H, W) to (B, K, classes).

    The module names match a stand-alone network's wherever the layer exists in both
    (stem, reductions, last BN, classifier; an edge's conv op is ``conv1``/``conv3`` with
    its BN ``bn1``/``bn3``). The classifier is a grouped 1x1 convolution on the pooled
    features, the K linear layers side by side. Monotone and example-wise as a single
    network is (selection by a fixed mask included), so synflow takes its forward-only path.
    """

    nasforge_monotone: ClassVar[bool] = True

    def __init__(self, cells: int, config: MacroConfig) -> None:
        super().__init__()
        self.stack_size, self.config = cells, config
        c = config.C
        self.stem = nn.Sequential(
            nn.Conv2d(cells * config.in_channels, cells * c, 3, padding=1, bias=False, groups=cells),
            nn.BatchNorm2d(cells * c),
        )
        layers: list[nn.Module] = []
        for stage, width in enumerate(config.stage_channels):
            if stage > 0:
                layers.append(StackedReduction(cells, c, width))
                c = width
            layers.extend(StackedCell(cells, width) for _ in range(config.N))
        self.layers = nn.ModuleList(layers)
        self.lastact = nn.Sequential(nn.BatchNorm2d(cells * c), nn.ReLU(inplace=False))
        self.classifier = nn.Conv2d(cells * c, cells * config.num_classes, 1, groups=cells)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, k = x.shape[0], self.stack_size
        h = self.stem(x.reshape(b, k * x.shape[2], *x.shape[3:]))
        for layer in self.layers:
            h = layer(h)
        h = self.lastact(h)
        # the mean over H, W as a single network takes it, then each network's linear layer
        logits = self.classifier(h.mean(dim=(2, 3), keepdim=True))
        return logits.view(b, k, self.config.num_classes)

    def cells(self) -> list[StackedCell]:
        return [m for m in self.layers if isinstance(m, StackedCell)]


@attrs.frozen
class _Block:
    """One stacked tensor's place in the arena: K network-major copies of one tensor."""

    name: str
    buffer: bool
    shape: tuple[int, ...]  # the stacked tensor's shape (first dimension K * per-network)
    per_cell: int  # elements of one network's copy
    offset: int  # bytes from the arena's start


def _align(n: int) -> int:
    return (n + ALIGN - 1) // ALIGN * ALIGN


class NB201Stack:
    """K NAS-Bench-201 networks as one module (the space's
    :class:`~nasforge.kernel.search_space.NetworkStack`)."""

    def __init__(self, cells: int, config: MacroConfig, dtype: torch.dtype = torch.float32) -> None:
        if isinstance(cells, bool) or not isinstance(cells, int) or cells < 1:
            raise ValueError(f"a stack holds at least one network, got cells={cells!r}")
        self.cells, self.config, self.dtype = cells, config, dtype
        with torch.device("meta"):
            shape = StackedNB201(cells, config)
        blocks: list[_Block] = []
        offset = 0
        itemsize = torch.empty((), dtype=dtype).element_size()
        for buffer, named in ((False, shape.named_parameters()), (True, shape.named_buffers())):
            for name, t in named:
                if not t.is_floating_point():
                    continue  # num_batches_tracked: one counter per layer, not per network
                blocks.append(_Block(name, buffer, tuple(t.shape), t.numel() // cells, offset))
                offset += _align(t.numel() * itemsize)
        self._blocks = {b.name: b for b in blocks}
        self.nbytes = offset
        self._itemsize = itemsize

    # --- the CPU side: a network's weights into its rows of the arena --------------------
    def _rows(self, block: _Block, arena: torch.Tensor) -> torch.Tensor:
        size = block.per_cell * self.cells * self._itemsize
        return arena[block.offset : block.offset + size].view(self.dtype).view(self.cells, block.per_cell)

    def _target(self, name: str, ops: Sequence[str]) -> str:
        """The stacked tensor a stand-alone network's tensor ``name`` goes to."""
        parts = name.split(".")
        if parts[0] == "layers" and len(parts) > 3 and parts[2] == "edges":
            # layers.j.edges.e.{1: conv, 2: bn}.x -> layers.j.edges.e.{conv,bn}{1,3}.x
            slot = _CONV_SLOT[OP_NAMES.index(ops[int(parts[3])])]
            kind = "conv" if parts[4] == "1" else "bn"
            return ".".join([*parts[:4], kind + slot, *parts[5:]])
        return name

    def pack(self, index: int, g: Genotype, network: nn.Module, arena: torch.Tensor) -> None:
        """Copy ``network`` (``g``'s stand-alone network) into cell ``index``'s rows.

        Rows of conv slots ``g`` does not use keep what they held (finite weights of an
        earlier network, or zeros): no network's output or per-network sum reads them.
        """
        ops = tuple(g.choices)
        check_ops(ops)
        with torch.no_grad():
            for table in (network.named_parameters(), network.named_buffers()):
                for name, t in table:
                    if not t.is_floating_point():
                        continue
                    block = self._blocks[self._target(name, ops)]  # type: ignore[arg-type]
                    self._rows(block, arena)[index].copy_(t.reshape(-1))

    # --- the device side: the module over an arena ------------------------------------------
    def module(self, arena: torch.Tensor, start: int = 0, count: int | None = None) -> StackedNB201:
        """The module of cells ``start .. start+count`` (all by default), its weights views
        of ``arena`` on ``arena``'s device; call :meth:`arrange` before running it."""
        count = self.cells - start if count is None else count
        if start < 0 or count < 1 or start + count > self.cells:
            raise ValueError(f"cells {start}..{start + count} are not in a stack of {self.cells}")
        with torch.device("meta"):
            module = StackedNB201(count, self.config)
        for name, m in module.named_modules():
            prefix = f"{name}." if name else ""
            for table, buffer in ((m._parameters, False), (m._buffers, True)):
                for attr, t in list(table.items()):
                    if t is None:
                        continue
                    block = self._blocks.get(prefix + attr)
                    if block is None:  # num_batches_tracked
                        table[attr] = torch.zeros(t.shape, dtype=t.dtype, device=arena.device)
                        continue
                    first = block.offset + start * block.per_cell * self._itemsize
                    shape = (count * block.shape[0] // self.cells, *block.shape[1:])
                    view = alias(arena, first, self.dtype, shape)
                    table[attr] = view if buffer else nn.Parameter(view)
        module.train()
        return module

    def arrange(self, module: nn.Module, genotypes: Sequence[Genotype]) -> None:
        """Point ``module``'s networks at ``genotypes``, one per network of the module."""
        assert isinstance(module, StackedNB201)
        count = module.stack_size
        if len(genotypes) != count:
            raise ValueError(f"a module of {count} networks was given {len(genotypes)} genotypes")
        codes = []
        for g in genotypes:
            ops = tuple(g.choices)
            check_ops(ops)
            codes.append([OP_NAMES.index(op) for op in ops])
        per_edge = torch.tensor(codes, dtype=torch.long).T  # (edges, networks)
        device = module.classifier.weight.device
        masks_of: dict[int, torch.Tensor] = {}
        for cell in module.cells():
            edges = [cast(StackedEdge, edge) for edge in cell.edges]
            width = edges[0].conv1.weight.shape[0] // count
            if width not in masks_of:
                onehot = per_edge[:, None, :] == torch.arange(len(OP_NAMES))[None, :, None]
                masks_of[width] = onehot.repeat_interleave(width, dim=2).to(device)  # (edges, ops, K*w)
            for e, edge in enumerate(edges):
                column = per_edge[e].tolist()
                edge.present = tuple(sorted(set(column)))
                edge.masks = masks_of[width][e]
                conv = tuple(op in (CONV1, CONV3) for op in column)
                edge.relu.stack_cells = conv  # type: ignore[assignment]
                edge.conv1.stack_cells = tuple(op == CONV1 for op in column)  # type: ignore[assignment]
                edge.conv3.stack_cells = tuple(op == CONV3 for op in column)  # type: ignore[assignment]


__all__ = ["NB201Stack", "StackedNB201"]
