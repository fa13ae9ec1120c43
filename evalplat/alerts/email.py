"""The e-mail channel: the alerts of a night over SMTP (smtplib), as text and as HTML.

The message is ``multipart/alternative``: the plain text every channel shares, and an HTML body
(``evalplat.alerts.email_html``). Its ``Message-ID`` is built from the notice's idempotency key,
so a retried delivery carries the same id and mail systems that deduplicate drop the copy.

``security`` chooses how the connection is protected:

- ``starttls`` (default, port 587): connect in clear, then ``STARTTLS`` before anything else;
  a server that does not offer it is a permanent failure (we never fall back to clear text);
- ``ssl`` (port 465): TLS from the first byte;
- ``none`` (port 25): clear text, for a relay on the same host or network.

The certificate is verified against the system's CAs, or ``cafile`` (an internal CA). ``host``,
``port``, ``username``, ``password``, ``from`` and ``to`` may hold ``${ENV}`` placeholders,
expanded at each send. Login happens only when ``username`` is set.

Failures: a refused login, refused sender or recipients, or a missing STARTTLS are permanent;
connection errors, timeouts and 4xx replies (SMTP's "try again later") are transient.
"""

from __future__ import annotations

import smtplib
import ssl
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from typing import Any

from evalplat.alerts.base import BACKOFF, Channel, ChannelKind, DeliveryError, Param, SettingError
from evalplat.alerts.email_html import render_html
from evalplat.alerts.notice import Notice

SECURITY = ("starttls", "ssl", "none")
DEFAULT_PORTS = {"starttls": 587, "ssl": 465, "none": 25}


def build_email(notice: Notice, sender: str, recipients: list[str], prefix: str) -> Any:
    mail = EmailMessage()
    mail["Subject"] = f"{prefix} {notice.title()}".strip()
    mail["From"] = sender
    mail["To"] = ", ".join(recipients)
    mail["Date"] = formatdate(localtime=False)
    key = notice.key
    mail["Message-ID"] = make_msgid(domain="evalplat") if key is None else f"<{key}@evalplat>"
    mail.set_content(notice.text())
    mail.add_alternative(render_html(notice), subtype="html")
    return mail


class EmailChannel(Channel):
    kind = "email"

    def __init__(self, name: str, params: dict[str, Any]):
        to = params["to"]
        if isinstance(to, list) and (not to or not all(isinstance(r, str) and r for r in to)):
            raise SettingError(
                "email channel: to must be an address or a non-empty list of them", "to"
            )
        super().__init__(name, params)

    def send(self, notice: Notice) -> None:
        security = self.params["security"]
        host = str(self.expanded("host"))
        port = self._port(security)
        sender = str(self.expanded("from"))
        to = self.expanded("to")
        recipients = [to] if isinstance(to, str) else [str(r) for r in to]
        username = self.expanded("username")
        mail = build_email(notice, sender, recipients, self.params["subject_prefix"])
        context = ssl.create_default_context(cafile=self.params["cafile"])
        timeout = float(self.params["timeout"])
        try:
            smtp: smtplib.SMTP
            if security == "ssl":
                smtp = smtplib.SMTP_SSL(host, port, timeout=timeout, context=context)
            else:
                smtp = smtplib.SMTP(host, port, timeout=timeout)
            with smtp:
                smtp.ehlo()
                if security == "starttls":
                    if not smtp.has_extn("starttls"):
                        raise DeliveryError(
                            f"SMTP server {host}:{port} does not offer STARTTLS "
                            '(set security = "ssl" or "none" if that is intended)',
                            transient=False,
                        )
                    smtp.starttls(context=context)
                    smtp.ehlo()
                if username:
                    smtp.login(str(username), str(self.expanded("password") or ""))
                smtp.send_message(mail, from_addr=sender, to_addrs=recipients)
        except DeliveryError:
            raise
        except smtplib.SMTPAuthenticationError as error:
            raise DeliveryError(f"SMTP login refused: {_reply(error)}", transient=False) from None
        except smtplib.SMTPRecipientsRefused as error:
            refused = ", ".join(sorted(error.recipients))
            raise DeliveryError(f"SMTP recipients refused: {refused}", transient=False) from None
        except smtplib.SMTPResponseException as error:
            # 4xx is "try again later" in SMTP; 5xx is final.
            transient = 400 <= error.smtp_code < 500
            raise DeliveryError(f"SMTP error: {_reply(error)}", transient=transient) from None
        except ssl.SSLError as error:
            raise DeliveryError(
                f"TLS with {host}:{port} failed: {error}", transient=False
            ) from None
        except (smtplib.SMTPException, OSError) as error:
            raise DeliveryError(
                f"SMTP {host}:{port}: {error or type(error).__name__}", transient=True
            ) from None

    def _port(self, security: str) -> int:
        value = self.expanded("port")
        if value is None:
            return DEFAULT_PORTS[security]
        try:
            return int(value)
        except ValueError:
            raise DeliveryError(f"port must be a number, got {value!r}", transient=False) from None


def _reply(error: smtplib.SMTPResponseException) -> str:
    text = error.smtp_error
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    return f"{error.smtp_code} {text}"


KIND = ChannelKind(
    name="email",
    description="e-mail over SMTP (STARTTLS, SSL or plain; optional login)",
    params=(
        Param("host", (str,), "SMTP server host, e.g. ${SMTP_HOST}", required=True),
        Param(
            "port",
            (int, str),
            "SMTP port (587 starttls, 465 ssl, 25 none)",
            default=None,
            minimum=1,
            maximum=65535,
        ),
        Param("from", (str,), "sender address", required=True),
        Param("to", (str, list), "recipient address or list of addresses", required=True),
        Param("username", (str,), "login name, e.g. ${SMTP_USER}", default=None),
        Param("password", (str,), "login password, e.g. ${SMTP_PASSWORD}", default=None),
        Param("security", (str,), "connection security", default="starttls", choices=SECURITY),
        Param("cafile", (str,), "CA certificate file to verify the server with", default=None),
        Param("subject_prefix", (str,), "text before the subject", default="[evalplat]"),
        Param(
            "timeout",
            (int, float),
            "seconds to wait for the server",
            default=10.0,
            above=0,
            maximum=3600,
        ),
        BACKOFF,
    ),
    factory=EmailChannel,
)
