"""Views (not served yet: 501)."""

from __future__ import annotations

from chalicelib.protocol.iceberg.wire import unserved

list_views = unserved("Views")
create_view = unserved("Views")
load_view = unserved("Views")
view_exists = unserved("Views")
replace_view = unserved("Views")
drop_view = unserved("Views")
rename_view = unserved("Views")
register_view = unserved("Views")
