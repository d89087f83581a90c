"""Outbound network block for every test process mutagent starts (baseline, workers, mutants).

Only loopback and Unix sockets are allowed: the fake model server listens on 127.0.0.1, while a
mutant that loses its base URL would otherwise reach the real API. The block raises before any
packet leaves (names other than ``localhost`` are not even resolved, so no DNS query either).
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Any

LOCAL_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"}
_installed = False


class NetworkBlockedError(ConnectionRefusedError):
    """Raised instead of connecting to a non-loopback address while mutagent runs the tests."""


def is_local(host: Any) -> bool:
    if host is None:
        return True
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    host = str(host).strip("[]").split("%", 1)[0]
    if host == "" or host.lower() in LOCAL_NAMES or host.lower().endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return address.is_loopback or address.is_unspecified or bool(mapped and mapped.is_loopback)


def _blocked(host: Any, port: Any) -> NetworkBlockedError:
    return NetworkBlockedError(
        f"mutagent blocked a network connection to {host}:{port} "
        "(only loopback is reachable while mutagent runs tests)"
    )


def _check_address(family: int, address: Any) -> None:
    if family == getattr(socket, "AF_UNIX", object()) or not isinstance(address, tuple) or not address:
        return
    if not is_local(address[0]):
        raise _blocked(address[0], address[1] if len(address) > 1 else "?")


def install() -> None:
    """Patch ``socket`` in this process (idempotent)."""
    global _installed
    if _installed:
        return
    _installed = True
    original_connect = socket.socket.connect
    original_connect_ex = socket.socket.connect_ex
    original_create_connection = socket.create_connection
    original_getaddrinfo = socket.getaddrinfo

    def connect(self: socket.socket, address: Any) -> None:
        _check_address(self.family, address)
        return original_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> int:
        _check_address(self.family, address)
        return original_connect_ex(self, address)

    def create_connection(address: Any, *args: Any, **kwargs: Any) -> socket.socket:
        host, port = address[0], address[1]
        if not is_local(host):
            raise _blocked(host, port)
        return original_create_connection(address, *args, **kwargs)

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if not is_local(host):
            try:
                ipaddress.ip_address(str(host.decode() if isinstance(host, bytes) else host).strip("[]"))
            except ValueError:
                raise _blocked(host, port) from None  # a name: resolving it would send a DNS query
        return original_getaddrinfo(host, port, *args, **kwargs)

    socket.socket.connect = connect  # type: ignore[method-assign]
    socket.socket.connect_ex = connect_ex  # type: ignore[method-assign]
    socket.create_connection = create_connection  # type: ignore[assignment]
    socket.getaddrinfo = getaddrinfo  # type: ignore[assignment]
