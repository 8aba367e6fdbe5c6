"""view.html: the page `dshreplay view` writes and an export puts beside each report.html.

One Jinja2 template (`viewer/templates/view.html.j2`) with its style and script inline;
the data (`model.SessionView.to_json()`) goes in one `<script type="application/json">`
element with every `<`, `>` and `&` written as a JSON escape, so no log text can end the
element or open markup; the script puts every text on the page with `textContent`. The
Content-Security-Policy allows inline script and style and nothing else: no network,
no frame, no form, no `<base>`.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from dshreplay._jsvalues import json_bytes
from dshreplay.analyses._render import clean

if TYPE_CHECKING:
    import jinja2

    from dshreplay.io.reader import LogSource
    from dshreplay.viewer._model import SessionView

__all__ = ["CSP", "render_view", "data_json", "page_title", "view_page"]

CSP = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; base-uri 'none'; "
       "form-action 'none'")


@cache
def _environment() -> jinja2.Environment:
    import jinja2
    return jinja2.Environment(loader=jinja2.PackageLoader("dshreplay.viewer", "templates"), autoescape=True,
                              undefined=jinja2.StrictUndefined)


def data_json(view: SessionView) -> str:
    """The page's data as JSON text that is safe inside a script element."""
    text = json_bytes(view.to_json()).decode()
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def render_view(view: SessionView) -> str:
    """The whole page."""
    from markupsafe import Markup
    return _environment().get_template("view.html.j2").render(
        csp=Markup(CSP), title=clean(view.title), data=Markup(data_json(view)))  # (ours: escaped above)


def page_title(session_id: object) -> str:
    """The page's title: the session id as logged (a string), or that it has none."""
    return f"dshreplay view {clean(session_id)}" if type(session_id) is str else "dshreplay view (no session id)"


def view_page(source: LogSource, session_id: object) -> bytes:
    """view.html of a log (read as given: an export hands it the redacted log), as an export writes it."""
    from dshreplay.viewer._model import build_view
    return render_view(build_view(source, page_title(session_id))).encode()
