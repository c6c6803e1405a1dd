"""The "What happened" log of ``play`` and ``watch``: a RichLog that keeps to its end and
rewraps its history when its width changes."""

from __future__ import annotations

from collections import deque
from typing import Any, Self

from rich.text import Text
from textual import events
from textual.widgets import RichLog


class FollowingLog(RichLog):
    """A RichLog scrolls to its end when written to, not when the panels around it grow (a
    second row of cards, the evidence panel) and shrink it: then its last lines would hide
    below the fold until the next write. This one keeps to its end.

    A RichLog also keeps each line as it was wrapped when written: made narrow and then wide
    again, the terminal kept the whole history broken into a narrow column. This one keeps
    what was written, unwrapped (as many entries as it keeps lines), and wraps it all again
    at each new width."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._entries: deque[Any] = deque(maxlen=self.max_lines)
        self._wrapped_at = 0  # the content width the lines shown were wrapped at
        self._rewrapping = False

    def write(
        self,
        content: Any,
        width: int | None = None,
        expand: bool = False,
        shrink: bool = True,
        scroll_end: bool | None = None,
        animate: bool = False,
    ) -> Self:
        if not self._rewrapping:
            self._entries.append(content.copy() if isinstance(content, Text) else content)
            if width:
                self._wrapped_at = width
        return super().write(content, width, expand, shrink, scroll_end, animate)

    def clear(self) -> Self:
        self._entries.clear()
        return super().clear()

    def on_resize(self, event: events.Resize) -> None:
        # RichLog's own on_resize (rendering deferred writes) runs too, after this one:
        # Textual calls the handler of every class in the MRO
        width = self.scrollable_content_region.width
        if self._size_known and width and width != self._wrapped_at:
            self.rewrap(width)
        if self.auto_scroll:
            self.scroll_end(animate=False, immediate=False, x_axis=False)

    def rewrap(self, width: int) -> None:
        """Wrap the whole history again at ``width`` columns."""
        entries = list(self._entries)
        super().clear()
        self._wrapped_at = width
        self._rewrapping = True
        try:
            for entry in entries:
                super().write(entry, width=width, scroll_end=False)
        finally:
            self._rewrapping = False
