"""A strict-enough HTML check for tests: tags balance, ids are unique, links and anchors are collected."""
from __future__ import annotations

from html.parser import HTMLParser

VOID = {"meta", "img", "br", "hr", "input", "link", "col", "area", "base", "source", "wbr"}


class PageStructure(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.ids: list[str] = []
        self.hrefs: list[str] = []
        self.srcs: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.append(a["id"])
        if "href" in a:
            self.hrefs.append(a["href"])
        if "src" in a:
            self.srcs.append(a["src"])
        if tag not in VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes <{self.stack[-1] if self.stack else 'nothing'}>")
            if tag in self.stack:
                while self.stack.pop() != tag:
                    pass
            return
        self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def parse_page(html: str) -> PageStructure:
    page = PageStructure()
    page.feed(html)
    page.close()
    if page.stack:
        page.errors.append(f"unclosed: {page.stack}")
    return page
