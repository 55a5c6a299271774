import gc

from judgekit.cli import main

try:
    main()
finally:
    # The command has finished (its store closed, its output flushed): the objects it made are
    # moved out of the collector's reach, so the interpreter's exit does not traverse them all
    # once more (~25-50 ms of a short command, e.g. a panel rerun that makes no call).
    gc.freeze()
