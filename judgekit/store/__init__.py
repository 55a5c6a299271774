"""The SQLite store: schema and add-only migrations, items, ratings, calls, bulk and streamed
writes, locking and the digests a verdict is matched with. One module owns each table.
"""

from judgekit.core.lazy import lazy_exports

# the public names of the module this package replaced, imported from where they live on first use
_LAZY = {
    "DEFAULT_STORE": "database",
    "ITEM_CORE": "schema",
    "ItemRow": "schema",
    "JudgeRatingKey": "schema",
    "JudgeRatings": "judge_rows",
    "LockWaiter": "locking",
    "MAX_SQL_VARIABLES": "schema",
    "MIGRATIONS": "schema",
    "NewText": "schema",
    "RATER_KINDS": "schema",
    "RATING_COLUMNS": "schema",
    "RATING_KEY": "schema",
    "RatingRow": "schema",
    "STATUSES": "schema",
    "SampleRow": "schema",
    "Store": "database",
    "StoredJudgeRating": "schema",
    "WriteCounts": "schema",
    "item_content_hash": "schema",
    "migration_statements": "schema",
}
__all__ = sorted(_LAZY)
__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
