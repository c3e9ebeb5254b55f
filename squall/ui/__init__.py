"""`squall ui`: Storm's UI daemon for squall. An ASGI app (Starlette on uvicorn) that serves
Storm's UI REST API v1, a web page and Prometheus /metrics, reading everything from the
nimbus leader over Thrift as Storm's UI does, so it holds no state of its own."""
