"""A config.json's fields read one by one: whole numbers within their limits, flags and
activation names, each refusal a ``DataFileError`` naming the file and the field; the
defaults transformers gives a field stand in for one a config leaves out."""

from __future__ import annotations

from collections.abc import Mapping

from explorer.core.files.datafile import DataFileError, brief

ACTIVATIONS = {"silu": "silu", "swish": "silu", "gelu": "gelu", "gelu_new": "gelu",
               "gelu_pytorch_tanh": "gelu", "gelu_fast": "gelu"}
LIMIT = 1 << 24  # any one dimension; far beyond real models (checked before any product)
# Counts a step is built from layer by layer or expert by expert: 10× the largest published
# (126 layers in Llama 3.1 405B; 256 routed experts in DeepSeek-V3), so analysis stays quick.
LIMITS = {"num_hidden_layers": 1_000, "n_layer": 1_000, "num_local_experts": 10_000, "num_experts": 10_000,
          "num_attention_heads": 10_000, "n_head": 10_000}


class ConfigFields:
    """A config's fields; ``defaults`` (transformers') stand in for those it leaves out."""

    def __init__(self, config: dict[str, object], origin: str,
                 defaults: Mapping[str, object] | None = None) -> None:
        self.config, self.origin = config, origin
        self.values = {**(defaults or {}), **{k: v for k, v in config.items() if v is not None}}
        self.defaults = defaults or {}
        self.defaulted: dict[str, object] = {}  # the defaults read, for a field the file leaves out

    def _read(self, key: str) -> object:
        """``key``'s value, noting a default that stands in for a field the file leaves out."""
        value = self.values[key]
        if self.config.get(key) is None and key in self.defaults:
            self.defaulted[key] = value
        return value

    def error(self, field: str | None, message: str) -> DataFileError:
        return DataFileError(self.origin, message, field=field)

    def has(self, key: str) -> bool:
        return self.values.get(key) is not None

    def integer(self, *keys: str, default: int | None = None, minimum: int = 1) -> int:
        """The first of ``keys`` present, a whole number from ``minimum`` to ``LIMIT``."""
        for key in keys:
            if self.has(key):
                value = self._read(key)
                if isinstance(value, bool) or not isinstance(value, int):
                    raise self.error(key, f"must be a whole number, got {brief(value)}")
                limit = LIMITS.get(key, LIMIT)
                if not minimum <= value <= limit:
                    raise self.error(key, f"must be between {minimum} and {limit:,}, got {value:,}")
                return value
        if default is None:
            raise self.error(keys[0], "is missing")
        return default

    def flag(self, key: str, default: bool) -> bool:
        value = self._read(key) if key in self.values else default
        if not isinstance(value, bool):
            raise self.error(key, f"must be true or false, got {brief(value)}")
        return value

    def activation(self, *keys: str) -> str:
        for key in keys:
            if self.has(key):
                value = self._read(key)
                if not isinstance(value, str) or value not in ACTIVATIONS:
                    raise self.error(key, f"activation {brief(value)} is not one of {', '.join(ACTIVATIONS)}")
                return ACTIVATIONS[value]
        raise self.error(keys[0], "is missing")
