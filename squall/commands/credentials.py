"""`squall credentials init|issue`: make the cluster's certificates and identities."""

from __future__ import annotations

import click

from squall.commands.group import console, main


@main.group()
def credentials() -> None:
    """The cluster's credentials (security.dir)."""


@credentials.command("init")
@click.pass_context
def credentials_init(ctx: click.Context) -> None:
    """Create what is missing of the CA, the nimbus, admin and supervisor certificates and
    the ZooKeeper role identities."""
    from squall.security.credentials import ensure_cluster_credentials

    directory = ensure_cluster_credentials(ctx.obj)
    console.print(
        str(directory) if directory else "security is off: no credentials to make", markup=False
    )


@credentials.command("issue")
@click.argument("name")
@click.pass_context
def credentials_issue(ctx: click.Context, name: str) -> None:
    """Issue a client certificate for user NAME (run where the CA key is); NAME is the
    principal nimbus.users, nimbus.admins and topology.users name."""
    from squall.security.certificates import issue

    pem = issue(ctx.obj, name)
    console.print(
        f"{pem} and {pem.with_suffix('.key')}: give them, with ca.pem, to {name}",
        markup=False,
        soft_wrap=True,
    )
