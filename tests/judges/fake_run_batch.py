"""A stand-in for ``vllm run-batch``: answers an OpenAI Batch input file by POSTing each request's
body to an OpenAI-compatible server (the fake provider) and writes the output file in the format
vLLM writes (``vllm/entrypoints/openai/run_batch.py``: ``BatchRequestOutput``)::

    {"id": "vllm-<hex>", "custom_id": ..., "response": {"status_code": 200,
     "request_id": "vllm-batch-<hex>", "body": <the chat completion>}, "error": null}

and, for a request it could not run, ``{"status_code": 400, "request_id": ..., "body": null}``
with ``"error": "<message>"``. It knows nothing of judgekit: it reads the input lines as vLLM does.

    python tests/judges/fake_run_batch.py -i in.jsonl -o out.jsonl --server http://127.0.0.1:PORT
"""

from __future__ import annotations

import argparse
import json
import urllib.request
import uuid
from collections.abc import Collection
from pathlib import Path
from typing import Any


def _post(server: str, url: str, body: dict[str, Any]) -> dict[str, Any]:
    req = urllib.request.Request(server.rstrip("/") + url, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.loads(resp.read())


def run_batch(input_path: Path, output_path: Path, server: str, *,
              fail: Collection[str] = ()) -> int:
    """Answer every request of ``input_path`` into ``output_path``; the ``custom_id`` in ``fail``
    get vLLM's error line instead. Returns the number of lines written."""
    out = []
    for line in Path(input_path).read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        request = json.loads(line)
        cid = request["custom_id"]
        if cid in fail:
            response = {"status_code": 400, "request_id": f"vllm-batch-{uuid.uuid4().hex}", "body": None}
            row = {"id": f"vllm-{uuid.uuid4().hex}", "custom_id": cid, "response": response,
                   "error": "the model could not run this request"}
        else:
            body = _post(server, request["url"], request["body"])
            response = {"status_code": 200, "request_id": f"vllm-batch-{uuid.uuid4().hex}", "body": body}
            row = {"id": f"vllm-{uuid.uuid4().hex}", "custom_id": cid, "response": response, "error": None}
        out.append(json.dumps(row) + "\n")
    Path(output_path).write_text("".join(out), encoding="utf-8")
    return len(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("-i", "--input-file", required=True)
    parser.add_argument("-o", "--output-file", required=True)
    parser.add_argument("--server", required=True, help="host root of an OpenAI-compatible server")
    args = parser.parse_args()
    run_batch(Path(args.input_file), Path(args.output_file), args.server)


if __name__ == "__main__":
    main()
