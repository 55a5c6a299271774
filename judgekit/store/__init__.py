"""The SQLite store: schema and add-only migrations, items, ratings, calls, bulk and streamed
writes, locking and the digests a verdict is matched with. One module owns each table.
"""

from judgekit.core.lazy import lazy_exports

# the names of the module this package replaced, imported from where they live now on first use
_LAZY = {
    "DEFAULT_STORE": "database",
    "ITEM_CORE": "database",
    "ItemRow": "database",
    "Iterator": "database",
    "JudgeRatingKey": "database",
    "JudgeRatings": "database",
    "JudgekitError": "database",
    "LockWaiter": "database",
    "MAX_SQL_VARIABLES": "database",
    "MIGRATIONS": "database",
    "NewText": "database",
    "RATER_KINDS": "database",
    "RATING_COLUMNS": "database",
    "RATING_KEY": "database",
    "RatingRow": "database",
    "STATUSES": "database",
    "SampleRow": "database",
    "Store": "database",
    "StoredJudgeRating": "database",
    "WriteCounts": "database",
    "contextmanager": "database",
    "create_with_umask": "database",
    "env_lock_timeout": "database",
    "item_content_hash": "database",
    "migration_statements": "database",
}
__all__ = sorted(_LAZY)
__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
