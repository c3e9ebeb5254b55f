"""`squall blobstore create|list|cat|update|delete|set-acl|replication`: Storm's blobstore
command (org.apache.storm.command.Blobstore) over nimbus's Thrift blob calls, with Storm's
flags and output lines."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import IO, Any

import click

from squall import thrift_api as T
from squall.client import blob_chunks, blob_keys, upload_blob
from squall.commands.group import err, main, nimbus_client_for
from squall.commands.storm_args import acl, acl_text

_READ_BYTES = 1 << 20


def _chunks(stream: IO[bytes]) -> Iterator[bytes]:
    while chunk := stream.read(_READ_BYTES):
        yield chunk


def _source(file: str | None) -> IO[bytes]:
    """The blob's contents: FILE, or standard input as Storm reads it without -f."""
    return open(file, "rb") if file else sys.stdin.buffer  # noqa: SIM115 - closed by caller


def _positive(ctx: click.Context, param: click.Parameter, value: int | None) -> int | None:
    if value is not None and value <= 0:
        raise click.BadParameter(f"{value} is not a positive integer")
    return value


@main.group()
def blobstore() -> None:
    """Storm's blob store: blobs topologies read (topology.blobstore.map), with ACLs in the
    form [uo]:[username]:[r-][w-][a-], comma separated, e.g.
    `squall blobstore create mytopo:data.tgz -f data.tgz -a u:alice:rwa,u:bob:rw,o::r`."""


@blobstore.command("create")
@click.argument("key")
@click.option("-f", "--file", "file", type=click.Path(exists=True, dir_okay=False))
@click.option("-a", "--acl", "acl_spec", help="[uo]:[username]:[r-][w-][a-],... (default: yours)")
@click.option("-r", "--replication-factor", type=int, callback=_positive)
@click.pass_context
def create(ctx, key: str, file: str | None, acl_spec: str | None, replication_factor) -> None:
    """Create blob KEY from FILE, or from standard input."""
    entries = acl(acl_spec)
    meta = T.SettableBlobMeta(acl=entries, replication_factor=replication_factor)
    err.print(f"Creating {key} with ACL {acl_text(entries)}", markup=False, highlight=False)
    with nimbus_client_for(ctx) as client, _source(file) as source:
        upload_blob(client, client.beginCreateBlob(key, meta), _chunks(source))
    err.print(f"Successfully created {key}", markup=False, highlight=False)


@blobstore.command("update")
@click.argument("key")
@click.option("-f", "--file", "file", type=click.Path(exists=True, dir_okay=False))
@click.pass_context
def update(ctx: click.Context, key: str, file: str | None) -> None:
    """Replace the contents of blob KEY with FILE, or standard input (needs write access)."""
    with nimbus_client_for(ctx) as client, _source(file) as source:
        upload_blob(client, client.beginUpdateBlob(key), _chunks(source))
    err.print(f"Successfully updated {key}", markup=False, highlight=False)


@blobstore.command("cat")
@click.argument("key")
@click.option("-f", "--file", "file", type=click.Path(dir_okay=False), help="write it here")
@click.pass_context
def cat(ctx: click.Context, key: str, file: str | None) -> None:
    """Write blob KEY to FILE, or standard output (needs read access)."""
    with nimbus_client_for(ctx) as client:
        out = open(file, "wb") if file else sys.stdout.buffer  # noqa: SIM115
        try:
            for chunk in blob_chunks(client, key):
                out.write(chunk)
        finally:
            if file:
                out.close()
            else:
                out.flush()


@blobstore.command("delete")
@click.argument("keys", nargs=-1, required=True)
@click.pass_context
def delete(ctx: click.Context, keys: tuple[str, ...]) -> None:
    """Delete each blob KEY (needs write access)."""
    with nimbus_client_for(ctx) as client:
        for key in keys:
            client.deleteBlob(key)
            err.print(f"deleted {key}", markup=False, highlight=False)


@blobstore.command("list")
@click.argument("keys", nargs=-1)
@click.pass_context
def list_blobs(ctx: click.Context, keys: tuple[str, ...]) -> None:
    """List blobs: `KEY VERSION ACL` per line, every key you may see, or only KEYS."""
    with nimbus_client_for(ctx) as client:
        for key in keys or blob_keys(client):
            try:
                meta = client.getBlobMeta(key)
            except T.AuthorizationException:
                if keys:
                    err.print(f"ACCESS DENIED to key: {key}", markup=False, highlight=False)
                continue
            except T.KeyNotFoundException:
                if keys:
                    err.print(f"{key} NOT FOUND", markup=False, highlight=False)
                continue
            click.echo(f"{key} {meta.version} {acl_text(meta.settable.acl)}")


@blobstore.command("set-acl")
@click.argument("key")
@click.option("-s", "--set", "acl_spec", help="[uo]:[username]:[r-][w-][a-],... (needs admin)")
@click.pass_context
def set_acl(ctx: click.Context, key: str, acl_spec: str | None) -> None:
    """Set the ACL of blob KEY (no --set: keep the current one)."""
    entries = acl(acl_spec)
    with nimbus_client_for(ctx) as client:
        current = client.getBlobMeta(key).settable
        chosen = entries or current.acl
        err.print(f"Setting ACL for {key} to {acl_text(chosen)}", markup=False, highlight=False)
        client.setBlobMeta(key, T.SettableBlobMeta(acl=chosen))


@blobstore.command("replication")
@click.argument("key")
@click.option("--read", "read", is_flag=True, help="print the blob's replication factor")
@click.option("--update", "update_", is_flag=True, help="set it to --replication-factor")
@click.option("-r", "--replication-factor", type=int, callback=_positive)
@click.pass_context
def replication(ctx, key: str, read: bool, update_: bool, replication_factor) -> None:
    """Read (--read) or update (--update -r N) the replication factor of blob KEY."""
    if read == update_:
        raise click.UsageError("give one of --read and --update")
    if update_ and replication_factor is None:
        raise click.UsageError("Replication factor needed when doing blob update")
    with nimbus_client_for(ctx) as client:
        if read:
            factor: Any = client.getBlobReplication(key)
            click.echo(f"Current replication factor {factor}")
        else:
            factor = client.updateBlobReplication(key, replication_factor)
            click.echo(f"Replication factor is set to {factor}")
