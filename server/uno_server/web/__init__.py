"""The web view ``uno-arena serve --web-port`` serves: the live matches, and one table live.

It is a spectator of its own server: it reads ``AdminService.ListMatches`` and ``WatchMatch``
over a gRPC channel to that server (loopback), with the admin token, so a browser can never see
more than the spectator stream carries. Pages are plain HTML, CSS and JavaScript from this
package (no build step); a table is pushed to the browser with server-sent events.
"""

from .server import WebView, start_web_view, state_json

__all__ = ["WebView", "start_web_view", "state_json"]
