"""llama.cpp's own OpenAI-compatible server for a GGUF file, from the prebuilt ``xllamacpp`` wheel (the ``llm``
extra): no compiler, nothing downloaded. The tests start it (tests/test_llm_server.py); docs/llm.md runs it by
hand the same way:

    python tests/llm_server.py --model tiny.gguf --port 18790 --alias tiny

It prints ``listening on URL`` once the model is loaded and serves until it is terminated. It is llama.cpp's
C++ server (``llama-server``) in-process, so it takes what tavernzoo sends: ``response_format`` with a JSON
schema, a GBNF ``grammar`` (an invalid one is an HTTP 400, not a crash), and ``usage`` in every answer.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="the GGUF file")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8080, help="port (default 8080)")
    parser.add_argument("--n_ctx", type=int, default=8192, help="context length in tokens (default 8192)")
    parser.add_argument("--threads", type=int, default=1, help="CPU threads (default 1)")
    parser.add_argument("--alias", default=None, help="the model's name in /v1/models (any name is served)")
    args = parser.parse_args(argv)
    try:
        import xllamacpp
    except ImportError:
        print("error: the server needs xllamacpp: pip install 'tavernzoo[llm]'", file=sys.stderr)
        return 2
    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.n_ctx = args.n_ctx
    params.n_batch = 512
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    params.hostnames = [args.host]
    params.port = args.port
    if args.alias:
        params.model_alias = {args.alias}
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    try:
        server = xllamacpp.Server(params)
    except Exception as error:  # noqa: BLE001 - a model that does not load is one line, not a traceback
        print(f"error: cannot serve {args.model}: {error}", file=sys.stderr)
        return 2
    print(f"listening on {server.listening_address}/v1", flush=True)
    while not stop.wait(1.0):  # a timed wait, so that the signal handler runs promptly
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
