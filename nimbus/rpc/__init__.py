"""Nimbus's Thrift surface: the server (framing, TLS, connection limits), one request's path
through authorization and checks, and the handler whose writes become events for the
controller's queue."""
