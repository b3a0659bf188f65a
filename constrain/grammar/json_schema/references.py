"""`$ref` resolution inside one schema document: JSON pointers, `$anchor`s, and URIs relative to
the `$id`s of enclosing schemas (each `$id` starts a resource with its own base URI).

The document is walked once: every schema's base URI, every resource (`$id`) and anchor is
recorded, and every `$ref` is resolved to (JSON pointer from the root, target) by the object
holding it, so the translator's derived schemas never need to know where they came from.
References to the JSON Schema meta-schemas resolve to the copies the `jsonschema` package ships
(nothing is fetched); references to other documents we were not given are refused by name.
"""

from __future__ import annotations

import urllib.parse
from functools import lru_cache
from typing import Any, Optional, Union

from ...errors import SchemaError, UnsupportedSchemaError
from .keywords import escape_key

DEFAULT_BASE = "https://constrain.invalid/root.json"
_DATA = ("enum", "const", "default", "examples", "example")  # values, not schemas

Target = tuple[str, Any]  # (JSON pointer from the root, the schema there)


class References:
    def __init__(self, root: Any, legacy: bool, documents: Optional[dict[str, Any]] = None) -> None:
        self.root = root
        self.legacy = legacy  # drafts 4-7: `$ref` siblings (including $id) are ignored
        self.resources: dict[str, Target] = {}
        self.anchors: dict[tuple[str, str], Target] = {}
        self.by_holder: dict[int, Union[Target, Exception]] = {}
        self._holders: list[Any] = []  # keep the dicts alive: their ids key by_holder
        base = DEFAULT_BASE
        if isinstance(root, dict):
            base = self._with_id(root, base)
        self.resources.setdefault(_strip(base), ("#", root))
        self.resources.setdefault(_strip(DEFAULT_BASE), ("#", root))
        pending: list[tuple[dict, str, str]] = []
        self._walk(root, "#", base, pending, top=True)
        for uri, doc in (documents or {}).items():  # other documents the caller gave us
            doc_base = self._with_id(doc, uri) if isinstance(doc, dict) else uri
            for name in (uri, doc_base):
                self.resources.setdefault(_strip(name), (f"{_strip(uri)}#", doc))
            self._walk(doc, f"{_strip(uri)}#", doc_base, pending, top=True)
        self.meta_schemas: dict[str, Any] = {}  # meta-schemas that $refs name (walked as documents)
        done = 0
        while done < len(pending):
            holder, ptr, at_base = pending[done]
            done += 1
            uri = _split(at_base, holder["$ref"])[0]
            if uri not in self.resources:
                doc = _meta_schema(uri)
                if doc is not None:
                    self.meta_schemas[uri] = doc
                    self.resources[uri] = (f"{uri}#", doc)
                    self._walk(doc, f"{uri}#", uri, pending, top=True)
        for holder, ptr, at_base in pending:
            try:
                self.by_holder[id(holder)] = self._resolve(holder["$ref"], at_base, ptr)
            except SchemaError as exc:
                self.by_holder[id(holder)] = exc
            self._holders.append(holder)

    def resolve(self, ref: str, pointer: str, holder: Optional[dict] = None) -> Target:
        """The target of `ref` (held by `holder`, if it is part of the document)."""
        if holder is not None:
            hit = self.by_holder.get(id(holder))
            if hit is not None:
                if isinstance(hit, Exception):
                    raise hit
                return hit
        return self._resolve(ref, DEFAULT_BASE if not isinstance(self.root, dict) else self._root_base(), pointer)

    # -- the walk --------------------------------------------------------------------------
    def _root_base(self) -> str:
        return self._with_id(self.root, DEFAULT_BASE)

    def _id_of(self, node: dict) -> Optional[str]:
        value = node.get("$id", node.get("id") if self.legacy else None)
        if not isinstance(value, str) or (self.legacy and "$ref" in node):
            return None
        return value

    def _with_id(self, node: dict, base: str) -> str:
        value = self._id_of(node)
        if value is None or (value.startswith("#") and self.legacy):
            return base
        return _join(base, value)

    def _walk(self, node: Any, ptr: str, base: str, pending: list, top: bool = False) -> None:
        if isinstance(node, list):
            for i, v in enumerate(node):
                self._walk(v, f"{ptr}/{i}", base, pending)
            return
        if not isinstance(node, dict):
            return
        ident = self._id_of(node)
        if ident is not None:
            if ident.startswith("#") and self.legacy:  # a plain-name fragment: an anchor
                self.anchors.setdefault((_strip(base), ident[1:]), (ptr, node))
            elif not top:
                base = _join(base, ident)
                self.resources.setdefault(_strip(base), (ptr, node))
        for key in ("$anchor", "$dynamicAnchor"):
            if isinstance(node.get(key), str):
                self.anchors.setdefault((_strip(base), node[key]), (ptr, node))
        if isinstance(node.get("$ref"), str):
            pending.append((node, ptr, base))
        for k, v in node.items():
            if k not in _DATA:
                self._walk(v, f"{ptr}/{escape_key(k)}", base, pending)

    # -- one reference ---------------------------------------------------------------------
    def _resolve(self, ref: str, base: str, pointer: str) -> Target:
        uri, frag = _split(base, ref)
        frag = urllib.parse.unquote(frag)
        resource = self.resources.get(uri)
        if resource is None:
            raise UnsupportedSchemaError(
                "$ref", pointer, f"{ref!r} refers to another document ({uri}); only references within the schema are supported"
            )
        if frag and not frag.startswith("/"):
            anchored = self.anchors.get((uri, frag))
            if anchored is None:
                raise SchemaError(f"$ref {ref!r}: no anchor {frag!r} in this schema", pointer)
            return anchored
        found = follow_pointer(*resource, frag)
        if found is None and resource[1] is not self.root:
            # Schemas in the wild give sub-schemas ids like "nullable-path" and still mean
            # "#/definitions/..." of the whole file (validators resolve it so): fall back.
            found = follow_pointer("#", self.root, frag)
        if found is None:
            raise SchemaError(f"$ref {ref!r} points nowhere", pointer)
        return found


def follow_pointer(path: str, node: Any, frag: str) -> Optional[Target]:
    """The JSON pointer `frag` from `node` (at `path`), or None if it leads nowhere."""
    for part in frag.split("/")[1:] if frag else []:
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
        path = f"{path}/{escape_key(part)}"
    return path, node


def _meta_schema(uri: str) -> Any:
    """The meta-schema published at `uri` (draft 3 to 2020-12, as the jsonschema package ships
    them), or None."""
    if not uri.startswith(("http://json-schema.org/", "https://json-schema.org/")):
        return None
    try:
        from jsonschema_specifications import REGISTRY
    except ImportError:  # pragma: no cover - jsonschema depends on it
        return None
    try:
        return REGISTRY.contents(uri.rstrip("#"))
    except Exception:  # noqa: BLE001 - referencing raises its own lookup errors
        return None


def _strip(uri: str) -> str:
    return urllib.parse.urldefrag(uri)[0]


def _split(base: str, ref: str) -> tuple[str, str]:
    """urldefrag(_join(base, ref)): most refs are fragments (`#/definitions/x`), whose
    resource is the base's, worked out once per base (urlparse per ref cost ~10 us each)."""
    if ref.startswith("#"):
        return _base_resource(_strip(base)), ref[1:]
    uri, frag = urllib.parse.urldefrag(_join(base, ref))
    return uri, frag


@lru_cache(maxsize=256)
def _base_resource(stripped: str) -> str:
    """The resource part of `stripped#anything` (the same for every fragment)."""
    return urllib.parse.urldefrag(stripped + "#")[0]


def _join(base: str, ref: str) -> str:
    """RFC 3986 reference resolution (urljoin does not resolve against URNs)."""
    if ref.startswith("#"):
        return _strip(base) + ref
    scheme = urllib.parse.urlsplit(ref).scheme
    if scheme:
        return ref
    return urllib.parse.urljoin(base, ref)
