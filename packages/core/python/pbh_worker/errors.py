"""Errors a worker reports to the harness as structured error replies."""


class WorkerError(Exception):
    """An error with a machine-readable kind, sent back as {"ok": false, "kind": kind, "error": message}.

    kind examples: "bad_request", "unsupported_model", "unsupported", "runtime_error", "import_error".
    fatal=True makes the worker exit after replying (use it when the runtime is left in an unusable state).
    """

    def __init__(self, kind: str, message: str, fatal: bool = False):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.fatal = fatal


class ProtocolError(Exception):
    """The request stream cannot be parsed; the worker cannot resynchronise and exits after replying."""
