"""judgekit's version, in a module of its own: the package's ``__init__`` re-exports it, and modules
that stamp it on their output (verdicts, reports) import it from here without importing the
package's ``__init__`` back (which reaches :mod:`judgekit.gate.run` lazily)."""

__version__ = "0.1.0"
