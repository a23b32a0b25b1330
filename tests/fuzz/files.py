"""Fuzzed files: safetensors genotypes, ONNX models and run journals.

Each mutator takes the bytes of a *valid* file that the library itself wrote (a template)
and returns ``(bytes, description)``. Structured mutations re-encode the file after
changing one field, so that they get past the outer format checks and reach the code
behind them (a well-formed safetensors file whose metadata is not JSON, a journal whose
header has a mistyped option); byte-level mutations (truncation, flipped bytes, a torn
last line) model what a crash or a bad disk leaves. The description names the mutation
so that a failure can be reproduced by hand.
"""

from __future__ import annotations

import json
import random
import struct
from typing import Any

from fuzz.source import STRUCTURAL, UNICODE, Source
from fuzz.values import json_value

# --- safetensors ----------------------------------------------------------------------

DTYPE_SIZES = {
    "BOOL": 1,
    "U8": 1,
    "I8": 1,
    "I16": 2,
    "U16": 2,
    "F16": 2,
    "I32": 4,
    "U32": 4,
    "F32": 4,
    "I64": 8,
}
DTYPE_FORMATS = {"I64": "<q", "U8": "<B", "I32": "<i", "F32": "<f", "BOOL": "<?", "U16": "<H", "I8": "<b"}
METADATA_VALUES = (
    "[",
    "not json",
    '"x"',
    "[1, 2]",
    "{}",
    '["a"]',
    "null",
    "",
    "[" * 5000,
    "[" * 100 + "]" * 100,
    '["' + "n" * 10_000 + '"]',
    "nb201",
    "darts",
    "toy",
    "nasforge-genotype/2",
    "2",
    '["none", "none", "none", "none", "none", "none", "none"]',
    "[0, 1, 2]",
    '[null, true, 1.5, {"a": 1}]',
)


def read_safetensors(data: bytes) -> tuple[dict[str, Any], bytes]:
    """(header, data buffer) of a well-formed file."""
    (n,) = struct.unpack("<Q", data[:8])
    return json.loads(data[8 : 8 + n]), data[8 + n :]


def write_safetensors(header: dict[str, Any], buffer: bytes) -> bytes:
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)
    return struct.pack("<Q", len(raw)) + raw + buffer


def _tensors(header: dict[str, Any], buffer: bytes) -> dict[str, tuple[str, list[int], bytes]]:
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        a, b = info["data_offsets"]
        out[name] = (info["dtype"], list(info["shape"]), buffer[a:b])
    return out


def _pack(tensors: dict[str, tuple[str, list[int], bytes]], metadata: Any) -> bytes:
    header: dict[str, Any] = {}
    if metadata is not None:
        header["__metadata__"] = metadata
    buffer = b""
    for name, (dtype, shape, data) in tensors.items():
        header[name] = {
            "dtype": dtype,
            "shape": shape,
            "data_offsets": [len(buffer), len(buffer) + len(data)],
        }
        buffer += data
    return write_safetensors(header, buffer)


def _values(dtype: str, data: bytes) -> list[Any]:
    fmt = DTYPE_FORMATS.get(dtype, "<q")
    size = struct.calcsize(fmt)
    return [struct.unpack(fmt, data[i : i + size])[0] for i in range(0, len(data) - size + 1, size)]


def _encode(dtype: str, values: list[Any]) -> bytes:
    fmt = DTYPE_FORMATS[dtype]
    out = b""
    for v in values:
        try:
            out += struct.pack(fmt, v)
        except struct.error:
            out += struct.pack(fmt, 0)
    return out


def mutate_safetensors(src: Source, valid: bytes, foreign: bytes) -> tuple[bytes, str]:
    """A corrupt, foreign or subtly wrong genotype file, from a valid one."""
    header, buffer = read_safetensors(valid)
    meta = dict(header.get("__metadata__", {}))
    tensors = _tensors(header, buffer)
    kind = src.integer(0, 13)
    if kind == 0:
        key = src.choice((*sorted(meta), "format", "names", "op_names", "space", "version", "text"))
        value = src.choice(METADATA_VALUES)
        meta[key] = value
        return _pack(tensors, meta), f"metadata {key!r} set to {value[:40]!r}"
    if kind == 1:
        key = src.choice(sorted(meta)) if meta else "format"
        meta.pop(key, None)
        return _pack(tensors, meta), f"metadata {key!r} removed"
    if kind == 2:
        value = src.choice(([1, 2], "meta", None, {"format": 1}, {"format": None}, {}))
        return _pack(tensors, value), f"__metadata__ replaced by {value!r}"
    if kind in (3, 4):  # an integer code (or a kind flag) out of its range
        name = src.choice(sorted(tensors))
        dtype, shape, data = tensors[name]
        values = _values(dtype, data)
        if not values:
            return _pack(tensors, meta), f"tensor {name!r} left empty"
        i = src.integer(0, len(values) - 1)
        names = json.loads(meta["names"]) if "names" in meta else []
        values[i] = src.choice((-1, -2, len(names), len(names) + 1, 2**62, -(2**63), 2, 255, 7))
        tensors[name] = (dtype, shape, _encode(dtype, values) if dtype in DTYPE_FORMATS else data)
        return _pack(tensors, meta), f"tensor {name!r} element {i} set to {values[i]!r}"
    if kind == 5:  # another dtype, data reinterpreted to the new element size
        name = src.choice(sorted(tensors))
        dtype, shape, data = tensors[name]
        new = src.choice(sorted(DTYPE_SIZES))
        n = max(1, len(data) // DTYPE_SIZES[dtype])
        tensors[name] = (new, [n], (data * 8)[: n * DTYPE_SIZES[new]])
        return _pack(tensors, meta), f"tensor {name!r} dtype {dtype} -> {new}"
    if kind == 6:  # shapes: lengths disagree, 2-D, scalar, empty
        name = src.choice(sorted(tensors))
        dtype, shape, data = tensors[name]
        size = DTYPE_SIZES.get(dtype, 8)
        n = len(data) // size
        choice = src.integer(0, 4)
        if choice == 0 and n > 1:
            tensors[name] = (dtype, [n - 1], data[: (n - 1) * size])
        elif choice == 1 and n % 2 == 0:
            tensors[name] = (dtype, [2, n // 2], data)
        elif choice == 2:
            tensors[name] = (dtype, [], data[:size])
        elif choice == 3:
            tensors[name] = (dtype, [0], b"")
        else:
            tensors[name] = (dtype, [n + 3], data + data[:size] * 3)
        return _pack(tensors, meta), f"tensor {name!r} reshaped to {tensors[name][1]}"
    if kind == 7:
        name = src.choice(sorted(tensors))
        del tensors[name]
        if src.chance(0.3):
            tensors["extra"] = ("F32", [1], b"\x00\x00\x80\x3f")
        return _pack(tensors, meta), f"tensor {name!r} removed"
    if kind == 8:
        cut = src.integer(0, len(valid) - 1)
        return valid[:cut], f"truncated to {cut} of {len(valid)} bytes"
    if kind == 9:
        n = src.choice((0, 1, 7, 2**32, 2**63 - 1, 2**64 - 1, len(valid), len(valid) - 7, 100_000_001))
        return struct.pack("<Q", n) + valid[8:], f"header length field set to {n}"
    if kind == 10:
        data = bytearray(valid)
        flips = [src.integer(0, len(data) - 1) for _ in range(src.integer(1, 4))]
        for i in flips:
            data[i] = src.integer(0, 255)
        return bytes(data), f"bytes at offsets {flips} overwritten"
    if kind == 11:
        raw = src.choice((b"{not json", b"[]", b'"x"', b"{}", b"\xff\xfe", b'{"__metadata__": 1}', b"null"))
        raw += b" " * (-len(raw) % 8)
        return struct.pack("<Q", len(raw)) + raw, f"header replaced by {raw.strip()!r}"
    if kind == 12:
        return src.choice(
            (b"", b"\x00" * 8, src.binary(64), foreign, valid + b"trailing")
        ), "foreign or empty bytes"
    return foreign, "a safetensors file of plain weights (not a nasforge genotype)"


def foreign_safetensors() -> bytes:
    """A well-formed safetensors file that is not a genotype (model weights)."""
    return _pack({"w": ("F32", [2], struct.pack("<ff", 1.0, 2.0))}, {"format": "pt"})


# --- ONNX -----------------------------------------------------------------------------


def mutate_onnx(src: Source, valid: bytes, other: bytes) -> tuple[bytes, str]:
    """A truncated, flipped or structurally wrong ONNX model, from a valid one."""
    kind = src.integer(0, 7)
    if kind == 0:
        cut = src.integer(0, len(valid) - 1)
        return valid[:cut], f"truncated to {cut} of {len(valid)} bytes"
    if kind == 1:
        data = bytearray(valid)
        flips = [src.integer(0, len(data) - 1) for _ in range(src.integer(1, 8))]
        for i in flips:
            data[i] = src.integer(0, 255)
        return bytes(data), f"bytes at offsets {flips} overwritten"
    if kind == 2:
        return src.choice(
            (b"", src.binary(200), other, b"\x08" * 40, valid + src.binary(16))
        ), "foreign bytes"
    return _onnx_structural(src, valid)


def _onnx_structural(src: Source, valid: bytes) -> tuple[bytes, str]:
    import onnx
    from onnx import TensorProto, helper

    model = onnx.load_from_string(valid)
    graph = model.graph
    kind = src.integer(0, 9)
    if kind == 0:
        model.opset_import[0].version = src.choice((0, 1, 999, -1))
        what = f"opset set to {model.opset_import[0].version}"
    elif kind == 1:
        model.ir_version = src.choice((0, 999, -5))
        what = f"ir_version set to {model.ir_version}"
    elif kind == 2 and len(graph.initializer):
        t = graph.initializer[src.integer(0, len(graph.initializer) - 1)]
        t.dims[0] = src.choice((-1, 0, 2**40, 10**15))
        what = f"initializer {t.name!r} dims[0] set to {t.dims[0]}"
    elif kind == 3:
        graph.node.append(helper.make_node("Bogus", ["input"], ["bogus_out"]))
        what = "a node of unknown op type 'Bogus' added"
    elif kind == 4 and len(graph.initializer):
        t = graph.initializer[0]
        t.ClearField("raw_data")
        t.data_location = TensorProto.EXTERNAL
        location = src.choice(("missing.bin", "../../../etc/hostname", "/dev/zero", "g.safetensors"))
        entry = t.external_data.add()
        entry.key, entry.value = "location", location
        what = f"initializer {t.name!r} points at external data {location!r}"
    elif kind == 5:
        del graph.input[:]
        what = "graph inputs removed"
    elif kind == 6:
        del graph.node[:]
        what = "graph nodes removed"
    elif kind == 7:
        prop = model.metadata_props.add()
        prop.key, prop.value = (
            src.choice(("", "nasforge.genotype", "k")),
            src.choice(("", "v" * 100_000, "{")),
        )
        what = "metadata property added"
    elif kind == 8 and len(graph.initializer) > 1:
        graph.initializer[1].name = graph.initializer[0].name
        what = "two initializers share a name"
    else:
        graph.output[0].type.tensor_type.elem_type = src.choice((0, 99, TensorProto.STRING))
        what = f"output element type set to {graph.output[0].type.tensor_type.elem_type}"
    return model.SerializeToString(), what


# --- journals -------------------------------------------------------------------------


def _lines(text: str) -> list[str]:
    return [line for line in text.split("\n") if line]


def _tamper(src: Source, record: Any) -> tuple[Any, str]:
    """Replace (or delete) one value somewhere inside ``record``; returns the path too."""
    parent: Any = None
    key: Any = None
    path: list[Any] = []
    node = record
    # walk down while there is somewhere to go and the source says so
    while isinstance(node, dict | list) and node and (parent is None or src.chance(0.6)):
        key = src.choice(sorted(node)) if isinstance(node, dict) else src.integer(0, len(node) - 1)
        parent, node = node, node[key]
        path.append(key)
    where = ".".join(map(str, path))
    if parent is None:
        value = json_value(src)
        return value, f"record replaced by {json.dumps(value, allow_nan=True)[:60]}"
    if isinstance(parent, dict) and src.chance(0.25):
        del parent[key]
        return record, f"{where} deleted"
    parent[key] = value = json_value(src)
    return record, f"{where} set to {json.dumps(value, allow_nan=True)[:60]}"


#: Fields a resume reads and trusts, by record type (random walks rarely reach them).
KNOWN_FIELDS = {
    "header": (
        ("spec", "strategy_options"),
        ("spec", "strategy_options", "population_size"),
        ("spec", "budget"),
        ("spec", "budget", "trials"),
        ("spec", "seed"),
        ("spec", "space"),
        ("spec", "evaluator_options"),
        ("space", "version"),
        ("format",),
        ("objective",),
        ("mode",),
    ),
    "trial": (
        ("index",),
        ("genotype", "choices"),
        ("genotype", "choices", 0),
        ("genotype", "space"),
        ("result", "objectives"),
        ("result", "failed"),
        ("result", "cost"),
        ("wall_seconds",),
        ("checksum",),
    ),
    "end": (("best",), ("best", "choices"), ("trials",), ("best_text",)),
}


def _tamper_known_field(src: Source, lines: list[str]) -> tuple[bytes, str]:
    """Set one field a resume relies on (a mistyped option, a doctored accuracy, ...)."""
    i = 0 if src.chance(0.4) else src.integer(0, len(lines) - 1)  # the header holds the most
    record = json.loads(lines[i])
    path = src.choice(KNOWN_FIELDS.get(record.get("type"), (("type",),)))
    node = record
    for key in path[:-1]:
        if isinstance(node, dict):
            node = node.setdefault(key, {})
        elif isinstance(node, list) and isinstance(key, int) and key < len(node):
            node = node[key]
    value = json_value(src)
    last = path[-1]
    if isinstance(node, dict) or (isinstance(node, list) and isinstance(last, int) and last < len(node)):
        node[last] = value
    if path == ("result", "objectives") and isinstance(record.get("result"), dict) and src.chance(0.5):
        objectives = json.loads(lines[i]).get("result", {}).get("objectives", {})
        record["result"]["objectives"] = {k: 100.0 for k in objectives}  # a doctored accuracy
        value = record["result"]["objectives"]
    lines[i] = json.dumps(record, sort_keys=True, allow_nan=True)
    what = f"line {i + 1}: {'.'.join(map(str, path))} set to {json.dumps(value, allow_nan=True)[:60]}"
    return ("\n".join(lines) + "\n").encode(), what


def mutate_journal(src: Source, valid: str, others: list[str]) -> tuple[bytes, str]:
    """A torn, reordered, foreign, tampered or empty journal, from a valid one."""
    lines = _lines(valid)
    kind = src.integer(0, 11)
    if kind <= 1:  # torn: whole lines then part of the next one (what a kill or ENOSPC leaves)
        keep = src.integer(1, len(lines) - 1)
        part = src.integer(1, max(1, len(lines[keep]) - 1))
        text = "\n".join(lines[:keep]) + "\n" + lines[keep][:part]
        return text.encode(), f"first {keep} lines plus {part} bytes of line {keep + 1} (torn last line)"
    if kind == 2:
        cut = src.integer(0, len(valid))
        return valid.encode()[:cut], f"truncated to {cut} bytes"
    if kind == 3:
        i = src.integer(0, len(lines) - 1)
        op = src.choice(("dropped", "duplicated"))
        lines = lines[:i] + lines[i + 1 :] if op == "dropped" else lines[: i + 1] + lines[i:]
        return ("\n".join(lines) + "\n").encode(), f"line {i + 1} {op}"
    if kind == 4:
        i, j = src.integer(0, len(lines) - 1), src.integer(0, len(lines) - 1)
        lines[i], lines[j] = lines[j], lines[i]
        return ("\n".join(lines) + "\n").encode(), f"lines {i + 1} and {j + 1} swapped"
    if kind == 5:
        body = lines[1:]
        random.Random(src.integer(0, 2**31)).shuffle(body)
        return ("\n".join([lines[0], *body]) + "\n").encode(), "records after the header shuffled"
    if kind in (6, 7):
        i = src.integer(0, len(lines) - 1)
        record, what = _tamper(src, json.loads(lines[i]))
        lines[i] = json.dumps(record, sort_keys=True, allow_nan=True)
        return ("\n".join(lines) + "\n").encode(), f"line {i + 1}: {what}"
    if kind == 8:
        return _tamper_known_field(src, lines)
    if kind == 9 and others:
        other = _lines(src.choice(others))
        op = src.integer(0, 2)
        if op == 0:
            return ("\n".join([other[0], *lines[1:]]) + "\n").encode(), "header of another run"
        if op == 1:
            return ("\n".join(lines + other) + "\n").encode(), "another run's journal appended"
        return ("\n".join(lines[:1] + other[1:]) + "\n").encode(), "trials of another run"
    if kind == 10:
        return src.choice(
            (
                (b"", "empty file"),
                (b"\n\n  \n", "blank lines only"),
                (src.binary(100), "random bytes"),
                (b"\xef\xbb\xbf" + valid.encode(), "UTF-8 byte-order mark"),
                (valid.replace("\n", "\r\n").encode(), "CRLF line ends"),
                (valid.encode() + b"\xff\xfe\n", "invalid UTF-8 appended"),
                (valid.encode().replace(b"\n", b"\x00\n", 1), "NUL byte in the header line"),
                ((lines[0] + "\n").encode(), "header only"),
                (("\n".join(lines[1:]) + "\n").encode(), "header missing"),
                ((b'{"type": "header"}\n'), "bare header record"),
                (("[]\n" * 3).encode(), "JSON lines that are not objects"),
            )
        )
    extra = src.choice(
        (
            '{"type": "end"}',
            '{"type": "trial"}',
            '{"type": "bogus", "x": 1}',
            "{" + src.text(STRUCTURAL + UNICODE, 20),
            "NaN",
            '{"type": "trial", "index": 1e309}',
        )
    )
    i = src.integer(1, len(lines))
    lines.insert(i, extra)
    return ("\n".join(lines) + "\n").encode(), f"line {extra[:40]!r} inserted at {i + 1}"
