"""`phoenix serve`, with its gRPC port on 127.0.0.1: Phoenix binds it on every address ("[::]") and has no
setting for the host, and a test peer listens on loopback only. Run with the venv's python (.ci/peers/phoenix.sh).
"""
import sys

import grpc.aio._server as aio_server

_add_insecure_port = aio_server.Server.add_insecure_port


def _loopback(self, address):
    return _add_insecure_port(self, address.replace("[::]:", "127.0.0.1:", 1))


aio_server.Server.add_insecure_port = _loopback

from phoenix.server.main import main  # noqa: E402  (after the patch, which it must see)

sys.argv = ["phoenix", "serve"]
sys.exit(main())
