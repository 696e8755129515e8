/* The pipelined walk: every node's questions (role, properties, states,
 * interfaces, then extents and actions, then children) are sent without
 * waiting for earlier answers, and each answer sends the next questions, so a
 * level of the tree costs about one round trip instead of one per property
 * per node (libatspi's synchronous API). Where the app serves
 * org.a11y.atspi.Cache.GetItems (GTK 3 once an event listener is registered,
 * GTK 4), one call brings every node's role, name, description, states,
 * interfaces, parent, index and child count, and a node found in it is
 * asked only its children where the cache does not name them all
 * (complete_kids; all such asked at once before the walk, prefetch_kids),
 * then, once the tree's shape is known, its extents and actions (and its
 * toolkit role name where that may say more than its standard role:
 * wants_toolkit_name): the app answers one call at a time, so fewer calls
 * is what makes the walk faster. A node the cache lacks (Qt 5's is empty) is
 * asked everything. Nodes are added breadth first whatever order the answers
 * come in (add_known_kids). Bounded by depth, node count, children per node
 * and time; a node that may hold very many children (a table: may_hold_many)
 * is asked its count before its children, since GetChildren makes the app
 * build every child.
 *
 * Find mode (opts->find_name): only states, name and child count are asked
 * of every node, its roles only when the name matches (and of the match's
 * ancestors, for its path); nodes are judged in index order (one app answers in
 * the order asked, so when node i's answers are in, so are those of every
 * node before it) and the walk stops when the first showing match's actions
 * and extents are in: the node ksr_atspi_tree_find would pick on the whole
 * tree (it is the first showing match in breadth-first order). Everything a
 * match needs is asked the moment its name matches, in one flight (roles,
 * interfaces, extents, actions, its ancestors' roles), not one round trip
 * after another; and once a showing exact match is read, no node is added
 * (every node added later comes after it in breadth-first order, so none can
 * win): the app's queue holds only what can still decide the find. */
#include "backend/atspi/priv.h"

#include <atspi/atspi-constants.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define DEFAULT_DEPTH 32
#define DEFAULT_NODES 5000
#define MAX_CHILDREN  1000 /* LibreOffice Calc reports every cell of a sheet */

enum req_kind {
	REQ_ROLE_ENUM, /* GetRole: the standard role (before GetRoleName, its fallback) */
	REQ_ROLE,
	REQ_PROPS,
	REQ_NAME,  /* Properties.Get, for Qt (REQ_PROPS is GetAll) */
	REQ_DESC,  /* " */
	REQ_COUNT, /* " */
	REQ_STATE,
	REQ_IFACES,
	REQ_EXTENTS,
	REQ_ACTIONS,
	REQ_CHILDREN
};

/* One node as Cache.GetItems describes it. */
typedef struct cache_item {
	guint32 role;
	uint64_t states;
	uint32_t ifaces;
	char *name, *description;
	char *parent;     /* its parent's path on the same bus, NULL: none there */
	int index, count; /* in its parent, of its children (-1: not given) */
	/* Its children's paths by index (keys of the cache), from the items
	 * whose parent it is; complete_kids says whether they are all of them. */
	const char **kids;
	int kids_known;
	bool kids_bad; /* two items at one index, or one past the count */
	/* Full walk: its GetChildren, asked ahead (prefetch_kids): 0 not
	 * asked, 1 in flight, 2 answered (pre_reply; NULL: it failed);
	 * pre_node: the node waiting for it (-1: none yet). */
	unsigned char pre;
	GVariant *pre_reply;
	int pre_node;
} cache_item;

/* Whose GetRoleName strings the walk can tell from the standard role
 * (toolkit_name_differs): GTK 3's, whose bridge (at-spi2-atk) answers
 * atk_role_get_name, the standard names but for a few roles and in no
 * other language. Any other toolkit's are asked of every node: GTK 4's are
 * not a function of the standard role (a filler is "widget" or "generic"),
 * nor Qt 5's, which are its translated names of its own roles, several to
 * one standard role ("spin box", "splitter", "grip"). */
enum role_names { NAMES_ASK, NAMES_ATK };

/* A node's children, known: as its cache item names them, or GetChildren's answer. */
struct kids {
	const cache_item *cache;
	char **paths;
	int n;
};

typedef struct walk {
	ksr_atspi *a;
	GHashTable *items; /* path -> cache_item, NULL without a cache */
	const ksr_atspi_app *app;
	ksr_atspi_tree *t;
	ksr_atspi_walk_opts o;
	GCancellable *cancel;
	int pending;
	bool window_coords; /* GTK4: extents relative to the window */
	bool by_get;        /* Qt: Properties.Get per property, never GetAll */
	enum role_names names;
	bool stopped; /* find mode: the match is known, the rest was cancelled */
	/* Per node: core answers (role, states, name, count) and detail answers
	 * (interfaces, extents, actions) still to come. */
	unsigned char *core_left, *det_left;
	unsigned char *cached; /* the node's core answers came from the cache */
	/* The node's standard role (GetRole or its cache item; 0: not known). */
	guint32 *role_num;
	unsigned char *states_in; /* its states are known (GetState answered, or the cache) */
	/* Find mode: the node's roles were asked; its extents and actions were
	 * asked (when its name matched, before its interfaces were known). */
	unsigned char *roles_asked, *detailed;
	/* Full walk: each node's children, once known (from the cache or
	 * GetChildren), wait until every node before it has had its own added
	 * (add_known_kids): the nodes are added breadth first, whatever order
	 * the answers come in, and a node bound keeps those nearest the root.
	 * kids_wait: calls in flight that may bring them (child count, children). */
	struct kids *kids;
	unsigned char *kids_wait;
	int expanded;     /* nodes before this one have had their children added */
	int scanned;      /* find mode: nodes judged so far, in index order */
	int cand, answer; /* find mode: first match, first showing match (-1: none) */
	/* Find mode: the first node read so far that is showing and named
	 * exactly as looked for (-1: none): nothing after it can win, so no
	 * node is added once it is known. */
	int early;
} walk;

typedef struct req {
	walk *w;
	int node;
	enum req_kind kind;
	/* Asked before the node's interfaces were known: an answer of an
	 * interface it turns out not to have is dropped, as if never asked. */
	bool ahead;
} req;

static const struct {
	const char *iface, *method, *reply;
} req_def[] = {
        [REQ_ROLE_ENUM] = {ATSPI_IFACE_ACCESSIBLE, "GetRole", "(u)"},
        [REQ_ROLE] = {ATSPI_IFACE_ACCESSIBLE, "GetRoleName", "(s)"},
        [REQ_PROPS] = {"org.freedesktop.DBus.Properties", "GetAll", "(a{sv})"},
        [REQ_NAME] = {"org.freedesktop.DBus.Properties", "Get", "(v)"},
        [REQ_DESC] = {"org.freedesktop.DBus.Properties", "Get", "(v)"},
        [REQ_COUNT] = {"org.freedesktop.DBus.Properties", "Get", "(v)"},
        [REQ_STATE] = {ATSPI_IFACE_ACCESSIBLE, "GetState", "(au)"},
        [REQ_IFACES] = {ATSPI_IFACE_ACCESSIBLE, "GetInterfaces", "(as)"},
        [REQ_EXTENTS] = {ATSPI_IFACE_COMPONENT, "GetExtents", "((iiii))"},
        [REQ_ACTIONS] = {ATSPI_IFACE_ACTION, "GetActions", "(a(sss))"},
        [REQ_CHILDREN] = {ATSPI_IFACE_ACCESSIBLE, "GetChildren", "(a(so))"},
};

static void on_reply(GObject *src, GAsyncResult *res, gpointer data);

/* enum role_names: GTK before 4 (ATK's names), the version known. */
static enum role_names role_names_of(const ksr_atspi_app *app)
{
	bool gtk3 = app && app->toolkit && strcasecmp(app->toolkit, "GTK") == 0 &&
	            app->toolkit_major > 0 && app->toolkit_major < 4;
	return gtk3 ? NAMES_ATK : NAMES_ASK;
}

bool ksr_atspi_app_window_coords(const ksr_atspi_app *app)
{
	return app && app->toolkit && strcasecmp(app->toolkit, "GTK") == 0 &&
	       app->toolkit_major >= 4;
}

static bool is_core(enum req_kind kind)
{
	return kind <= REQ_STATE;
}

/* Qt's full walk: a node's children are asked once its role is in
 * (kids_by_role), not after its count. */
static bool kids_after_role(const walk *w)
{
	return w->by_get && !w->o.find_name;
}

/* The calls whose answer may bring a node's children (its role or count,
 * then them). */
static bool brings_kids(const walk *w, enum req_kind kind)
{
	return kind == REQ_PROPS || kind == REQ_COUNT || kind == REQ_CHILDREN ||
	       (kind == REQ_ROLE_ENUM && kids_after_role(w));
}

/* Whether a node of this standard role may answer GetRoleName with
 * something else than the role's standard name (enum role_names): ATK
 * spells three roles its own way ("statusbar", "tear off menu item", "edit
 * bar"); a role with no standard name (an app's own, extended) may be
 * anything. */
static bool toolkit_name_differs(const walk *w, guint32 role)
{
	if (w->names == NAMES_ASK)
		return true;
	switch (role) {
	case ATSPI_ROLE_INVALID:
	case ATSPI_ROLE_UNKNOWN:
	case ATSPI_ROLE_EXTENDED:
	case ATSPI_ROLE_STATUS_BAR:
	case ATSPI_ROLE_TEAROFF_MENU_ITEM:
	case ATSPI_ROLE_EDITBAR:
		return true;
	default:
		return role >= ATSPI_ROLE_COUNT;
	}
}

/* Whether a node may have so many children that GetChildren is not to be
 * asked before its count: GetChildren makes the app build every child (a
 * spreadsheet's million cells). The containers of items, of rows and of
 * cells, documents, a node that manages its descendants (a table's cells
 * come and go) and one whose role is not known. */
static bool may_hold_many(guint32 role, uint64_t states)
{
	if (states & (1ull << ATSPI_STATE_MANAGES_DESCENDANTS))
		return true;
	switch (role) {
	case ATSPI_ROLE_INVALID:
	case ATSPI_ROLE_UNKNOWN:
	case ATSPI_ROLE_EXTENDED:
	case ATSPI_ROLE_TABLE:
	case ATSPI_ROLE_TREE_TABLE:
	case ATSPI_ROLE_TREE:
	case ATSPI_ROLE_LIST:
	case ATSPI_ROLE_LIST_BOX:
	case ATSPI_ROLE_TABLE_ROW:
	case ATSPI_ROLE_TREE_ITEM:
	case ATSPI_ROLE_LAYERED_PANE: /* GTK 2's icon view */
	case ATSPI_ROLE_CANVAS:
	case ATSPI_ROLE_DOCUMENT_FRAME:
	case ATSPI_ROLE_DOCUMENT_SPREADSHEET:
	case ATSPI_ROLE_DOCUMENT_PRESENTATION:
	case ATSPI_ROLE_DOCUMENT_TEXT:
	case ATSPI_ROLE_DOCUMENT_WEB:
	case ATSPI_ROLE_DOCUMENT_EMAIL:
		return true;
	default:
		return role >= ATSPI_ROLE_COUNT;
	}
}

static GVariant *req_params(const walk *w, enum req_kind kind)
{
	static const char *const prop[] = {
	        [REQ_NAME] = "Name", [REQ_DESC] = "Description", [REQ_COUNT] = "ChildCount"};
	switch (kind) {
	case REQ_PROPS:
		return g_variant_new("(s)", ATSPI_IFACE_ACCESSIBLE);
	case REQ_NAME:
	case REQ_DESC:
	case REQ_COUNT:
		return g_variant_new("(ss)", ATSPI_IFACE_ACCESSIBLE, prop[kind]);
	case REQ_EXTENTS:
		return g_variant_new("(u)", w->window_coords ? ATSPI_COORD_TYPE_WINDOW
		                                             : ATSPI_COORD_TYPE_SCREEN);
	default:
		return NULL;
	}
}

static void send_req_as(walk *w, int node, enum req_kind kind, bool ahead)
{
	GVariant *params = req_params(w, kind);
	req *r = ksr_xmalloc(sizeof *r);
	*r = (req){.w = w, .node = node, .kind = kind, .ahead = ahead};
	if (is_core(kind))
		w->core_left[node]++;
	else if (kind != REQ_CHILDREN)
		w->det_left[node]++;
	if (brings_kids(w, kind))
		w->kids_wait[node]++;
	w->pending++;
	w->t->calls++;
	g_dbus_connection_call(w->a->conn, w->app->bus, w->t->nodes[node].path, req_def[kind].iface,
	                       req_def[kind].method, params, G_VARIANT_TYPE(req_def[kind].reply),
	                       G_DBUS_CALL_FLAGS_NO_AUTO_START, KSR_ATSPI_CALL_MS, w->cancel,
	                       on_reply, r);
}

static void send_req(walk *w, int node, enum req_kind kind)
{
	send_req_as(w, node, kind, false);
}

static void cut(ksr_atspi_tree *t, const char *why)
{
	t->truncated = true;
	if (!t->cut_by)
		t->cut_by = why;
}

static void count_known(walk *w, int i, gint32 count);
static void ask_details(walk *w, int i);
static bool may_expand(const walk *w, int i);
static bool known_hidden(const walk *w, int i);
static int add_node(walk *w, const char *path, int parent);

/* Find mode: whether node i's name (role aside) is the one looked for; only
 * then do its roles matter to the finder. */
static bool name_matches(const walk *w, int i)
{
	return ksr_atspi_node_match_kind(&w->t->nodes[i], w->o.find_name, NULL) > 0;
}

/* Whether node's toolkit role name (GetRoleName) is asked, its standard
 * role known. It is the role where there is no standard one. The full walk
 * keeps it as the role's alias (matched, printed where it differs) where it
 * may say more (toolkit_name_differs); the find mode only to match a role
 * asked for that the standard one is not. */
static bool wants_toolkit_name(const walk *w, guint32 role)
{
	if (role == ATSPI_ROLE_INVALID || role >= ATSPI_ROLE_COUNT)
		return true;
	if (!toolkit_name_differs(w, role))
		return false;
	if (!w->o.find_name)
		return true;
	if (!w->o.find_role)
		return false;
	char *standard = ksr_atspi_role_canonical(role);
	bool same = ksr_atspi_role_equal(w->o.find_role, standard);
	free(standard);
	return !same;
}

/* roles_asked: GetRole (or the cache's), GetRoleName. */
#define ASKED_ROLE 1
#define ASKED_NAME 2

static void ask_role_name(walk *w, int i)
{
	if (w->roles_asked[i] & ASKED_NAME)
		return;
	w->roles_asked[i] |= ASKED_NAME;
	send_req(w, i, REQ_ROLE);
}

/* The standard role (which a cache item gives) and the toolkit's role name
 * where it is wanted (wants_toolkit_name), once per node: with GetRole where
 * it may be (a toolkit whose names the standard role does not tell, in a
 * full walk or a find of a role: one round trip less), else once GetRole
 * has answered (role_known). */
static void ask_roles(walk *w, int i)
{
	if (w->roles_asked[i] & ASKED_ROLE)
		return;
	w->roles_asked[i] |= ASKED_ROLE;
	if (!w->cached[i]) {
		send_req(w, i, REQ_ROLE_ENUM);
		if (w->names == NAMES_ASK && (!w->o.find_name || w->o.find_role))
			ask_role_name(w, i);
	} else if (wants_toolkit_name(w, w->role_num[i])) {
		ask_role_name(w, i);
	}
}

/* Find mode: node i is read (name, states, and roles where one is asked
 * for) and, if showing and named exactly, may be the early stop. Its own
 * showing state, not the tree's visible-is-showing rule, which a later
 * answer may change. */
static void note_early(walk *w, int i)
{
	const ksr_atspi_node *n = &w->t->nodes[i];
	if (i == 0 || (w->early >= 0 && w->early < i) ||
	    !(n->states & (1ull << ATSPI_STATE_SHOWING)) ||
	    ksr_atspi_node_match_kind(n, w->o.find_name, w->o.find_role) != 2)
		return;
	w->early = i;
	for (int k = n->parent; k >= 0; k = w->t->nodes[k].parent)
		if (!w->t->nodes[k].role) /* for its path */
			ask_roles(w, k);
}

/* Find mode: node i's name matches. Its roles, and (when no role is asked
 * for, so that the name alone makes it a match) its interfaces, extents and
 * actions, all at once: the extents and actions before the interfaces are
 * known (the app answers in order, so the interfaces are in before them). */
static void ask_match(walk *w, int i)
{
	ask_roles(w, i);
	note_early(w, i);
	if (i == 0 || w->o.find_role || w->detailed[i]) /* the root is never a match */
		return;
	if (w->cached[i]) {
		ask_details(w, i);
		return;
	}
	w->detailed[i] = true;
	send_req(w, i, REQ_IFACES);
	if (!known_hidden(w, i)) /* as ask_details: a hidden node has no place to click */
		send_req_as(w, i, REQ_EXTENTS, true);
	send_req_as(w, i, REQ_ACTIONS, true);
}

/* Node i's core answers as its cache item gives them. */
static void fill_from_item(walk *w, int i, const cache_item *it)
{
	ksr_atspi_node *n = &w->t->nodes[i];
	n->answered = true;
	n->role = ksr_atspi_role_canonical(it->role);
	w->role_num[i] = it->role;
	n->name = ksr_xstrdup(it->name);
	if (it->description && *it->description && !w->o.find_name)
		n->description = ksr_xstrdup(it->description);
	n->states = it->states;
	w->states_in[i] = true;
	if (n->depth > 1 && (n->states & (1ull << ATSPI_STATE_SHOWING)))
		w->t->visible_is_showing = false; /* as for a GetState answer */
	n->ifaces = it->ifaces;
	w->cached[i] = true;
}

/* Whether the cache names all of node i's children, in order: its count
 * (GTK 4's is the widget's, also before the app has built the children's
 * accessible objects) is met by as many items, one at each index. The
 * root's count is not to be trusted (GTK 4's says 0 and has a window), nor
 * a count of -1 (GTK 3's menus), nor indices of -1 (GTK 3's menu items). */
static bool complete_kids(int i, const cache_item *it)
{
	return i > 0 && it->count >= 0 && it->kids_known == it->count && !it->kids_bad;
}

/* Full walk: the children of every node whose children are known, in
 * index order, up to the first node still waiting for them. */
static void add_known_kids(walk *w)
{
	while (w->expanded < (int)w->t->len && !w->kids_wait[w->expanded]) {
		int k = w->expanded++;
		struct kids kd = w->kids[k]; /* a copy: add_node may move the array */
		w->kids[k] = (struct kids){0};
		int n = kd.cache ? kd.cache->count : kd.n;
		for (int c = 0; c < n; c++)
			if (add_node(w, kd.cache ? kd.cache->kids[c] : kd.paths[c], k) < 0)
				break;
		for (int c = 0; c < kd.n; c++)
			free(kd.paths[c]);
		free(kd.paths);
	}
}

/* Node i from its cache item: its children are asked unless the cache names
 * them all; its toolkit role name (matching takes it as an alias), extents
 * and actions are asked later (full walk: ask_cached_details) or only of a
 * match (find mode). */
static void got_children(walk *w, int i, GVariant *reply);

/* Node i's children from its item's GetChildren asked ahead: in, or
 * awaited (on_prefetch gives them), or asked again if that one failed. */
static void take_prefetched(walk *w, int i, cache_item *it)
{
	if (it->pre == 1) {
		it->pre_node = i;
		w->kids_wait[i]++;
	} else if (it->pre_reply) {
		got_children(w, i, it->pre_reply);
	} else {
		send_req(w, i, REQ_CHILDREN);
	}
}

static void from_cache(walk *w, int i, cache_item *it)
{
	ksr_atspi_node *n = &w->t->nodes[i];
	fill_from_item(w, i, it);
	/* Full walk: its own questions wait until the tree's shape is known
	 * (ask_cached_details), so the GetChildren answers the walk waits on
	 * are not queued behind them at the app. */
	if (w->o.find_name && name_matches(w, i))
		ask_match(w, i);
	/* Find mode keeps to GetChildren: it judges nodes in the order they
	 * were added, which must be the tree's; but a node with none has none. */
	if (w->o.find_name && complete_kids(i, it) && it->count == 0) {
		n->n_children = 0;
		return;
	}
	if (!w->o.find_name && complete_kids(i, it)) {
		n->n_children = it->count;
		w->t->kids_cached++;
		if (it->count > 0 && n->depth >= w->o.max_depth)
			cut(w->t, "depth");
		else
			w->kids[i].cache = it;
		return;
	}
	n->n_children = -1; /* counted from GetChildren's answer */
	if (!may_expand(w, i))
		return;
	if (n->depth >= w->o.max_depth) {
		cut(w->t, "depth");
	} else if (it->count > MAX_CHILDREN) {
		n->n_children = it->count;
		cut(w->t, "children");
	} else if (it->count < 0 && may_hold_many(it->role, it->states)) {
		/* GTK 3's cache gives no count of a node that manages its
		 * descendants (a table): asked before its children (count_known). */
		send_req(w, i, REQ_COUNT);
	} else if (it->pre) {
		take_prefetched(w, i, it);
	} else {
		send_req(w, i, REQ_CHILDREN);
	}
}

/* A node with nothing asked yet; -1 past the node bound. */
static int new_node(walk *w, const char *path, int parent)
{
	ksr_atspi_tree *t = w->t;
	if (t->len >= (size_t)w->o.max_nodes) {
		cut(t, "nodes");
		return -1;
	}
	if (t->len == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 64;
		t->nodes = ksr_xrealloc(t->nodes, t->cap * sizeof *t->nodes);
		w->core_left = ksr_xrealloc(w->core_left, t->cap);
		w->det_left = ksr_xrealloc(w->det_left, t->cap);
		w->cached = ksr_xrealloc(w->cached, t->cap);
		w->role_num = ksr_xrealloc(w->role_num, t->cap * sizeof *w->role_num);
		w->states_in = ksr_xrealloc(w->states_in, t->cap);
		w->roles_asked = ksr_xrealloc(w->roles_asked, t->cap);
		w->detailed = ksr_xrealloc(w->detailed, t->cap);
		w->kids = ksr_xrealloc(w->kids, t->cap * sizeof *w->kids);
		w->kids_wait = ksr_xrealloc(w->kids_wait, t->cap);
	}
	int i = (int)t->len++;
	t->nodes[i] = (ksr_atspi_node){
	        .path = ksr_xstrdup(path),
	        .parent = parent,
	        .depth = parent < 0 ? 0 : t->nodes[parent].depth + 1,
	};
	w->core_left[i] = w->det_left[i] = w->cached[i] = w->kids_wait[i] = 0;
	w->role_num[i] = 0;
	w->states_in[i] = 0;
	w->roles_asked[i] = w->detailed[i] = 0;
	w->kids[i] = (struct kids){0};
	return i;
}

static int add_node(walk *w, const char *path, int parent)
{
	int i = new_node(w, path, parent);
	if (i < 0)
		return -1;
	cache_item *it = w->items ? g_hash_table_lookup(w->items, path) : NULL;
	if (it) {
		from_cache(w, i, it);
		return i;
	}
	/* States first: whether to go below a node (find mode), whether to ask
	 * for extents and (Qt's full walk) for its children before their count
	 * depend on them; one app answers in order. */
	send_req(w, i, REQ_STATE);
	if (!w->o.find_name)
		ask_roles(w, i);
	/* Find mode: the root's children are the app's windows, never too many
	 * to ask for: asked at once, not after its count (a round trip less
	 * before the first window is read). */
	bool kids_now = w->o.find_name && i == 0;
	if (!w->by_get) {
		send_req(w, i, REQ_PROPS);
	} else {
		send_req(w, i, REQ_NAME);
		if (!w->o.find_name)
			send_req(w, i, REQ_DESC);
		if (!kids_now && !kids_after_role(w)) /* else asked by kids_by_role */
			send_req(w, i, REQ_COUNT);
	}
	if (kids_now) {
		w->t->nodes[i].n_children = -1; /* counted from GetChildren's answer */
		send_req(w, i, REQ_CHILDREN);
	}
	if (!w->o.find_name && !w->o.names_only)
		send_req(w, i, REQ_IFACES);
	return i;
}

/* Find mode: below a node only while a better match may lie there. Once a
 * hidden match is known only a showing one can win, and AT-SPI's showing
 * means the node and all its ancestors are shown (states 0: unknown, go on). */
static bool may_expand(const walk *w, int i)
{
	const ksr_atspi_node *n = &w->t->nodes[i];
	if (!w->o.find_name)
		return true;
	if (w->answer >= 0 || w->early >= 0)
		return false;
	return w->cand < 0 || ksr_atspi_tree_showing(w->t, (size_t)i) || n->states == 0;
}

/* Find mode: judge node i (all nodes before it are judged). Only a showing
 * control named exactly as written ends the walk; one that matches only with
 * whitespace normalised, or a hidden one, is a candidate that a later exact
 * or showing match beats (ksr_atspi_tree_find's order). */
static void judge(walk *w, int i)
{
	const ksr_atspi_node *n = &w->t->nodes[i];
	int kind = i == 0 ? 0 : ksr_atspi_node_match_kind(n, w->o.find_name, w->o.find_role);
	if (!kind)
		return;
	if (kind == 2 && ksr_atspi_tree_showing(w->t, (size_t)i)) {
		w->answer = i;
		for (int k = n->parent; k >= 0; k = w->t->nodes[k].parent)
			if (!w->t->nodes[k].role) /* for its path */
				ask_roles(w, k);
	} else if (w->cand < 0)
		w->cand = i;
	if (w->detailed[i]) /* asked when its name matched */
		return;
	if (w->cached[i])
		ask_details(w, i);
	else
		send_req(w, i, REQ_IFACES);
}

static void scan(walk *w)
{
	while (w->answer < 0 && w->scanned < (int)w->t->len && !w->core_left[w->scanned])
		judge(w, w->scanned++);
}

static bool found(const walk *w)
{
	if (w->answer < 0 || w->det_left[w->answer])
		return false;
	for (int k = w->answer; k >= 0; k = w->t->nodes[k].parent)
		if (w->core_left[k])
			return false;
	return true;
}

/* Find mode without a showing match: the roles the walk did not need but
 * its result names. A hidden match's description names its path (its
 * ancestors' roles); a failed search's near misses name the roles of the
 * controls that come closest, which may be any named node. */
static void ask_named_roles(walk *w)
{
	if (w->cand >= 0) {
		for (int k = w->t->nodes[w->cand].parent; k >= 0; k = w->t->nodes[k].parent)
			if (!w->t->nodes[k].role)
				ask_roles(w, k);
		return;
	}
	for (size_t i = 1; i < w->t->len; i++) {
		const ksr_atspi_node *n = &w->t->nodes[i];
		if (n->name && *n->name && !n->toolkit_role)
			ask_roles(w, (int)i);
	}
}

static void count_known(walk *w, int i, gint32 count)
{
	ksr_atspi_node *n = &w->t->nodes[i];
	n->n_children = count;
	if (count <= 0 || !may_expand(w, i) || (w->o.find_name && i == 0)) /* asked (add_node) */
		return;
	if (n->depth >= w->o.max_depth)
		cut(w->t, "depth");
	else if (count > MAX_CHILDREN)
		cut(w->t, "children");
	else
		send_req(w, i, REQ_CHILDREN);
}

/* Qt's full walk: node i's children asked the moment its role is known, in
 * the same flight as its other questions' answers, not after its count (one
 * call less per node): but a node that may hold very many (may_hold_many;
 * its states are in, asked before its role) and one at the depth bound are
 * asked their count first (count_known). */
static void kids_by_role(walk *w, int i, guint32 role)
{
	ksr_atspi_node *n = &w->t->nodes[i];
	if (n->depth >= w->o.max_depth || may_hold_many(role, n->states)) {
		send_req(w, i, REQ_COUNT);
		return;
	}
	n->n_children = -1; /* counted from GetChildren's answer */
	send_req(w, i, REQ_CHILDREN);
}

/* Node i's GetRole answer (role 0: none came): its toolkit role name where
 * wanted and not asked yet (ask_roles), and, in Qt's full walk, its
 * children. */
static void role_known(walk *w, int i, guint32 role)
{
	w->role_num[i] = role;
	if (wants_toolkit_name(w, role))
		ask_role_name(w, i);
	if (kids_after_role(w))
		kids_by_role(w, i, role);
}

static void got_props(walk *w, int i, GVariant *reply)
{
	ksr_atspi_node *n = &w->t->nodes[i];
	GVariant *dict = g_variant_get_child_value(reply, 0);
	const char *s = NULL;
	gint32 count = 0;
	if (g_variant_lookup(dict, "Name", "&s", &s))
		n->name = ksr_xstrdup(s);
	if (w->o.find_name && name_matches(w, i))
		ask_match(w, i);
	if (g_variant_lookup(dict, "Description", "&s", &s) && *s)
		n->description = ksr_xstrdup(s);
	g_variant_lookup(dict, "ChildCount", "i", &count);
	g_variant_unref(dict);
	count_known(w, i, count);
}

/* One Properties.Get answer (Qt). */
static void got_prop(walk *w, int i, enum req_kind kind, GVariant *reply)
{
	ksr_atspi_node *n = &w->t->nodes[i];
	GVariant *v = NULL;
	g_variant_get(reply, "(v)", &v);
	bool str = g_variant_is_of_type(v, G_VARIANT_TYPE_STRING);
	if (kind == REQ_NAME && str) {
		n->name = ksr_xstrdup(g_variant_get_string(v, NULL));
		if (w->o.find_name && name_matches(w, i))
			ask_match(w, i);
	} else if (kind == REQ_DESC && str && *g_variant_get_string(v, NULL))
		n->description = ksr_xstrdup(g_variant_get_string(v, NULL));
	else if (kind == REQ_COUNT && g_variant_is_of_type(v, G_VARIANT_TYPE_INT32))
		count_known(w, i, g_variant_get_int32(v));
	g_variant_unref(v);
}

static void got_children(walk *w, int i, GVariant *reply)
{
	GVariantIter *it = NULL;
	const char *bus, *path;
	if (!may_expand(w, i)) /* find mode: a match was judged since GetChildren was sent */
		return;
	g_variant_get(reply, "(a(so))", &it);
	if (w->t->nodes[i].n_children < 0) { /* not counted (from_cache, the root: add_node) */
		w->t->nodes[i].n_children = (int)g_variant_iter_n_children(it);
		if (w->t->nodes[i].n_children > MAX_CHILDREN) {
			cut(w->t, "children");
			g_variant_iter_free(it);
			return;
		}
	}
	struct kids kd = {0}; /* full walk: added in order by add_known_kids */
	if (!w->o.find_name)
		kd.paths = ksr_xcalloc(g_variant_iter_n_children(it) + 1, sizeof *kd.paths);
	while (g_variant_iter_next(it, "(&s&o)", &bus, &path)) {
		/* A child served by another connection (an embedded plug) is not this app's. */
		if (strcmp(bus, w->app->bus) != 0 || strcmp(path, "/org/a11y/atspi/null") == 0)
			continue;
		if (!w->o.find_name)
			kd.paths[kd.n++] = ksr_xstrdup(path);
		else if (add_node(w, path, i) < 0)
			break;
	}
	if (!w->o.find_name)
		w->kids[i] = kd;
	g_variant_iter_free(it);
}

/* The interfaces we use, of a D-Bus "as" of interface names. */
static uint32_t iface_bits(GVariant *as)
{
	static const struct {
		const char *name;
		uint32_t bit;
	} map[] = {
	        {ATSPI_IFACE_ACTION, KSR_ATSPI_IF_ACTION},
	        {ATSPI_IFACE_COMPONENT, KSR_ATSPI_IF_COMPONENT},
	        {"org.a11y.atspi.Text", KSR_ATSPI_IF_TEXT},
	        {"org.a11y.atspi.Value", KSR_ATSPI_IF_VALUE},
	        {"org.a11y.atspi.Selection", KSR_ATSPI_IF_SELECTION},
	};
	GVariantIter it;
	const char *name;
	uint32_t bits = 0;
	g_variant_iter_init(&it, as);
	while (g_variant_iter_next(&it, "&s", &name))
		for (size_t k = 0; k < sizeof map / sizeof *map; k++)
			if (strcmp(name, map[k].name) == 0)
				bits |= map[k].bit;
	return bits;
}

static void got_ifaces(walk *w, int i, GVariant *reply)
{
	GVariant *as = g_variant_get_child_value(reply, 0);
	w->t->nodes[i].ifaces |= iface_bits(as);
	g_variant_unref(as);
	if (!w->detailed[i]) /* else asked with it (ask_match) */
		ask_details(w, i);
}

/* Whether node i is known to be hidden: its states came and say neither
 * showing nor visible (GTK 4 never sets showing, only visible; Qt 5 answers
 * a closed menu's items with no state at all). Not known: not hidden. */
static bool known_hidden(const walk *w, int i)
{
	uint64_t seen = (1ull << ATSPI_STATE_SHOWING) | (1ull << ATSPI_STATE_VISIBLE);
	return w->states_in[i] && !(w->t->nodes[i].states & seen);
}

/* Extents and actions, once the node's states and interfaces are known. */
static void ask_details(walk *w, int i)
{
	/* The app's own time per call bounds the walk (gnome-calculator spends
	 * ~0.1 ms a call; the walk is mostly waiting on it), so calls whose answer
	 * is of no use are not made: a control that is hidden has no place to
	 * click. GetState was sent before GetInterfaces and one app answers in
	 * order, so its states are in here unless GetState failed. */
	w->detailed[i] = true;
	if ((w->t->nodes[i].ifaces & KSR_ATSPI_IF_COMPONENT) && !known_hidden(w, i))
		send_req(w, i, REQ_EXTENTS);
	if (w->t->nodes[i].ifaces & KSR_ATSPI_IF_ACTION)
		send_req(w, i, REQ_ACTIONS);
}

static void got_extents(walk *w, int i, GVariant *reply)
{
	ksr_atspi_node *n = &w->t->nodes[i];
	gint32 x, y, wd, ht;
	g_variant_get(reply, "((iiii))", &x, &y, &wd, &ht);
	/* Not laid out (hidden): GTK 3 answers a closed menu's items with
	 * INT_MIN,INT_MIN 1x1. */
	if (wd <= 0 || ht <= 0 || x == G_MININT32 || y == G_MININT32)
		return;
	if (w->window_coords) {
		if (!w->o.have_origin)
			return; /* relative to a window we do not know: no screen position */
		x += w->o.origin_x;
		y += w->o.origin_y;
	}
	n->has_extents = true;
	n->x = x, n->y = y, n->w = wd, n->h = ht;
}

static void got_actions(walk *w, int i, GVariant *reply)
{
	ksr_atspi_node *n = &w->t->nodes[i];
	GVariantIter *it = NULL;
	const char *name, *desc, *keys;
	g_variant_get(reply, "(a(sss))", &it);
	n->actions = ksr_xcalloc(g_variant_iter_n_children(it) + 1, sizeof *n->actions);
	while (g_variant_iter_next(it, "(&s&s&s)", &name, &desc, &keys)) {
		n->actions[n->n_actions++] = ksr_xstrdup(name);
		if (!n->keybinding && keys && *keys)
			n->keybinding = ksr_xstrdup(keys);
	}
	g_variant_iter_free(it);
}

static void got_reply(walk *w, const req *r, GVariant *reply)
{
	ksr_atspi_node *n = &w->t->nodes[r->node];
	n->answered = true;
	switch (r->kind) {
	case REQ_ROLE_ENUM: {
		guint32 role = 0;
		g_variant_get(reply, "(u)", &role);
		char *name = ksr_atspi_role_canonical(role);
		if (name) {
			free(n->role);
			n->role = name;
		}
		role_known(w, r->node, role);
		break;
	}
	case REQ_ROLE: {
		const char *role = NULL;
		g_variant_get(reply, "(&s)", &role);
		n->toolkit_role = ksr_xstrdup(role);
		if (!n->role) /* GetRole failed or named no standard role */
			n->role = ksr_xstrdup(role);
		break;
	}
	case REQ_PROPS:
		got_props(w, r->node, reply);
		break;
	case REQ_NAME:
	case REQ_DESC:
	case REQ_COUNT:
		got_prop(w, r->node, r->kind, reply);
		break;
	case REQ_STATE: {
		GVariant *au = g_variant_get_child_value(reply, 0);
		n->states = ksr_atspi_states_from_variant(au);
		g_variant_unref(au);
		w->states_in[r->node] = true;
		/* A GTK 4 that reports showing below its windows is judged by it
		 * (the one here sets it on the window alone). */
		if (n->depth > 1 && (n->states & (1ull << ATSPI_STATE_SHOWING)))
			w->t->visible_is_showing = false;
		break;
	}
	case REQ_IFACES:
		got_ifaces(w, r->node, reply);
		break;
	case REQ_EXTENTS:
		got_extents(w, r->node, reply);
		break;
	case REQ_ACTIONS:
		got_actions(w, r->node, reply);
		break;
	case REQ_CHILDREN:
		got_children(w, r->node, reply);
		break;
	}
	if (w->o.find_role && (r->kind == REQ_ROLE_ENUM || r->kind == REQ_ROLE))
		note_early(w, r->node); /* a role asked for: known now */
}

/* An answer asked ahead of the node's interfaces (ask_match) of one it does
 * not have: not used, as it would not have been asked. */
static bool unwanted(const walk *w, const req *r)
{
	uint32_t ifaces = w->t->nodes[r->node].ifaces;
	if (!r->ahead)
		return false;
	return r->kind == REQ_EXTENTS ? !(ifaces & KSR_ATSPI_IF_COMPONENT)
	                              : !(ifaces & KSR_ATSPI_IF_ACTION);
}

static void on_reply(GObject *src, GAsyncResult *res, gpointer data)
{
	req *r = data;
	walk *w = r->w;
	GError *error = NULL;
	GVariant *reply = g_dbus_connection_call_finish(G_DBUS_CONNECTION(src), res, &error);
	w->pending--;
	bool live = !g_cancellable_is_cancelled(w->cancel);
	bool use = !unwanted(w, r);
	if (reply && live && use)
		got_reply(w, r, reply);
	else if (!reply && !w->stopped && use)
		w->t->unanswered++;
	if (!reply && live && r->kind == REQ_ROLE_ENUM)
		role_known(w, r->node, 0); /* its role name, and the count before children */
	if (reply)
		g_variant_unref(reply);
	g_clear_error(&error);
	/* Counted down after got_reply, which may have asked for more details. */
	if (is_core(r->kind))
		w->core_left[r->node]--;
	else if (r->kind != REQ_CHILDREN)
		w->det_left[r->node]--;
	if (brings_kids(w, r->kind))
		w->kids_wait[r->node]--;
	if (live && w->o.find_name)
		scan(w);
	else if (live && brings_kids(w, r->kind))
		add_known_kids(w);
	free(r);
}

/* ---- the app's cache ---- */

static void item_free(gpointer p)
{
	cache_item *c = p;
	free(c->name);
	free(c->description);
	free(c->parent);
	free(c->kids);
	if (c->pre_reply)
		g_variant_unref(c->pre_reply);
	free(c);
}

/* Each item into its parent's children by index (link_kids). */
static void link_kid(GHashTable *h, const char *path, const cache_item *c)
{
	cache_item *p = c->parent ? g_hash_table_lookup(h, c->parent) : NULL;
	if (!p || c->index < 0 || p->count <= 0 || p->count > MAX_CHILDREN)
		return; /* too many: GetChildren's answer cuts it */
	if (c->index >= p->count || (p->kids && p->kids[c->index])) {
		p->kids_bad = true;
		return;
	}
	if (!p->kids)
		p->kids = ksr_xcalloc((size_t)p->count, sizeof *p->kids);
	p->kids[c->index] = path;
	p->kids_known++;
}

static void link_kids(GHashTable *h)
{
	GHashTableIter hi;
	gpointer key, val;
	g_hash_table_iter_init(&hi, h);
	while (g_hash_table_iter_next(&hi, &key, &val))
		link_kid(h, key, val);
}

/* One GetItems entry into h (key: its path), for the app's own objects. Two
 * layouts: (so)(so)(so) then "iiassusau" (index, child count: at-spi2-core's
 * bridge, GTK 3 and GTK 4) or "a(so)assusau" (the children: older bridges,
 * whose lists are not used). */
static void add_item(GHashTable *h, const char *bus, GVariant *item)
{
	const char *ibus = NULL, *path = NULL, *pbus = NULL, *ppath = NULL, *name = NULL,
	           *desc = NULL;
	GVariant *kids = NULL, *ifaces = NULL, *states = NULL;
	guint32 role = 0;
	gint32 index = -1, count = -1;
	const char *type = g_variant_get_type_string(item);
	if (strcmp(type, "((so)(so)(so)iiassusau)") == 0)
		g_variant_get(item, "((&s&o)(so)(&s&o)ii@as&su&s@au)", &ibus, &path, NULL, NULL,
		              &pbus, &ppath, &index, &count, &ifaces, &name, &role, &desc, &states);
	else if (strcmp(type, "((so)(so)(so)a(so)assusau)") == 0)
		g_variant_get(item, "((&s&o)(so)(&s&o)@a(so)@as&su&s@au)", &ibus, &path, NULL, NULL,
		              &pbus, &ppath, &kids, &ifaces, &name, &role, &desc, &states);
	else
		return;
	if (strcmp(ibus, bus) == 0) {
		cache_item *c = ksr_xcalloc(1, sizeof *c);
		if (strcmp(pbus, bus) == 0)
			c->parent = ksr_xstrdup(ppath);
		c->role = role;
		c->index = index;
		c->count = count;
		c->states = ksr_atspi_states_from_variant(states);
		c->ifaces = iface_bits(ifaces);
		c->name = ksr_xstrdup(name);
		c->description = ksr_xstrdup(desc);
		g_hash_table_replace(h, g_strdup(path), c);
	}
	if (kids)
		g_variant_unref(kids);
	g_variant_unref(ifaces);
	g_variant_unref(states);
}

/* GTK 3's bridge builds its cache, and serves GetItems, once a client has
 * registered an event listener with the registry (as libatspi does for its
 * own cache); once per connection, kept until it closes. */
static void register_listener(ksr_atspi *a, ksr_deadline d)
{
	static const char *const none[] = {NULL};
	ksr_err err = {0};
	a->cache_listener = true; /* asked once, whatever the answer */
	GVariant *r = ksr_atspi_call(
	        a->ctx, a->conn, "org.a11y.atspi.Registry", "/org/a11y/atspi/registry",
	        "org.a11y.atspi.Registry", "RegisterEvent",
	        g_variant_new("(s^ass)", "object:children-changed", none, ""), NULL, d, &err);
	if (r)
		g_variant_unref(r);
}

/* Every node of the app in one call, where it serves a non-empty cache. Qt's
 * bridge (5 and 6) answers GetItems with an empty list, always (qtbase's
 * QSpiDBusCache::GetItems): not asked, a round trip before the first node's
 * questions that could only say so. */
static void load_cache(walk *w, ksr_deadline d)
{
	if (w->by_get && w->app->toolkit_major >= 5)
		return;
	if (!w->a->cache_listener)
		register_listener(w->a, d);
	ksr_err err = {0};
	GVariant *r = ksr_atspi_call(w->a->ctx, w->a->conn, w->app->bus, "/org/a11y/atspi/cache",
	                             "org.a11y.atspi.Cache", "GetItems", NULL, NULL, d, &err);
	w->t->calls++;
	if (!r)
		return;
	GHashTable *h = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, item_free);
	GVariant *arr = g_variant_n_children(r) == 1 ? g_variant_get_child_value(r, 0) : NULL;
	if (arr && g_variant_is_of_type(arr, G_VARIANT_TYPE_ARRAY)) {
		GVariantIter it;
		GVariant *item;
		g_variant_iter_init(&it, arr);
		while ((item = g_variant_iter_next_value(&it))) {
			add_item(h, w->app->bus, item);
			g_variant_unref(item);
		}
	}
	if (arr)
		g_variant_unref(arr);
	g_variant_unref(r);
	if (g_hash_table_size(h) > 0) {
		link_kids(h);
		w->items = h;
	} else
		g_hash_table_destroy(h);
}

/* ---- the children the cache does not name, asked ahead ---- */

typedef struct prefetch {
	walk *w;
	cache_item *it;
} prefetch;

/* Whether from_cache asks GetChildren of the node with this item: the
 * cache does not name all its children (never the root's: GTK 4's count
 * says 0 and it has a window) and its count does not forbid it. */
static bool asks_children(const char *path, const cache_item *it)
{
	bool root = strcmp(path, ATSPI_ROOT_PATH) == 0;
	if ((!root && complete_kids(1, it)) || it->count > MAX_CHILDREN)
		return false;
	return !(it->count < 0 && may_hold_many(it->role, it->states));
}

static void on_prefetch(GObject *src, GAsyncResult *res, gpointer data)
{
	prefetch *p = data;
	walk *w = p->w;
	cache_item *it = p->it;
	free(p);
	it->pre_reply = g_dbus_connection_call_finish(G_DBUS_CONNECTION(src), res, NULL);
	it->pre = 2;
	w->pending--;
	int i = it->pre_node;
	if (i < 0 || g_cancellable_is_cancelled(w->cancel))
		return;
	it->pre_node = -1;
	if (it->pre_reply)
		got_children(w, i, it->pre_reply);
	else
		send_req(w, i, REQ_CHILDREN); /* failed: asked again, as from_cache would */
	w->kids_wait[i]--;
	add_known_kids(w);
}

static void prefetch_one(walk *w, const char *path, cache_item *it)
{
	prefetch *p = ksr_xmalloc(sizeof *p);
	*p = (prefetch){.w = w, .it = it};
	it->pre = 1;
	it->pre_node = -1;
	w->pending++;
	w->t->calls++;
	g_dbus_connection_call(w->a->conn, w->app->bus, path, ATSPI_IFACE_ACCESSIBLE, "GetChildren",
	                       NULL, G_VARIANT_TYPE("(a(so))"), G_DBUS_CALL_FLAGS_NO_AUTO_START,
	                       KSR_ATSPI_CALL_MS, w->cancel, on_prefetch, p);
}

/* Full walk: GetChildren of every cached node whose children the cache does
 * not name (GTK 3's menus and their items, the root), all at once before
 * the walk starts, the root's first: one round trip where asking each when
 * its node is added costs one per tree level (menus in menus). Asked also
 * where a bound (nodes, depth) then leaves the node out: a few calls. */
static void prefetch_kids(walk *w)
{
	cache_item *root = g_hash_table_lookup(w->items, ATSPI_ROOT_PATH);
	if (root && asks_children(ATSPI_ROOT_PATH, root))
		prefetch_one(w, ATSPI_ROOT_PATH, root);
	GHashTableIter hi;
	gpointer key, val;
	g_hash_table_iter_init(&hi, w->items);
	while (g_hash_table_iter_next(&hi, &key, &val))
		if (val != root && asks_children(key, val))
			prefetch_one(w, key, val);
}

/* ---- find mode from the cache alone ---- */

/* The name (and, where asked, role) match of a cache item, as
 * ksr_atspi_node_match_kind judges a node. An item whose standard role is
 * not the one asked may still have it as its toolkit role name: that is
 * asked of the app (one call; few items share a name). */
static int item_match_kind(walk *w, const char *path, const cache_item *it, ksr_deadline d)
{
	char *role = ksr_atspi_role_canonical(it->role);
	ksr_atspi_node n = {.name = it->name, .role = role};
	int kind = ksr_atspi_node_match_kind(&n, w->o.find_name, w->o.find_role);
	if (!kind && w->o.find_role && wants_toolkit_name(w, it->role) &&
	    ksr_atspi_node_match_kind(&n, w->o.find_name, NULL)) {
		ksr_err err = {0};
		GVariant *r =
		        ksr_atspi_call(w->a->ctx, w->a->conn, w->app->bus, path,
		                       ATSPI_IFACE_ACCESSIBLE, "GetRoleName", NULL, "(s)", d, &err);
		w->t->calls++;
		if (r) {
			g_variant_get(r, "(&s)", &n.toolkit_role);
			kind = ksr_atspi_node_match_kind(&n, w->o.find_name, w->o.find_role);
			g_variant_unref(r);
		}
	}
	free(role);
	return kind;
}

/* The path of the one item ksr_atspi_tree_find would pick on the whole tree,
 * where the cache alone can tell: a showing match that no other item equals
 * in rank (tree order would decide between equals, and the cache does not
 * give it). NULL: walk. A node that manages its descendants may have
 * children the cache leaves out (at-spi2-atk does not cache them), so then
 * the cache cannot say that no other node matches. */
static const char *cache_pick(walk *w, ksr_deadline d)
{
	GHashTableIter hi;
	gpointer key, val;
	g_hash_table_iter_init(&hi, w->items);
	while (g_hash_table_iter_next(&hi, &key, &val)) {
		const cache_item *it = val;
		if (it->states & (1ull << ATSPI_STATE_MANAGES_DESCENDANTS))
			return NULL;
		bool below_window = strcmp(key, ATSPI_ROOT_PATH) != 0 && it->parent &&
		                    strcmp(it->parent, ATSPI_ROOT_PATH) != 0;
		if (below_window && (it->states & (1ull << ATSPI_STATE_SHOWING)))
			w->t->visible_is_showing = false; /* as the walk judges it */
	}
	const char *best = NULL;
	int best_rank = 0, ties = 0;
	g_hash_table_iter_init(&hi, w->items);
	while (g_hash_table_iter_next(&hi, &key, &val)) {
		const cache_item *it = val;
		int kind = strcmp(key, ATSPI_ROOT_PATH) == 0 ? 0 : item_match_kind(w, key, it, d);
		if (!kind)
			continue;
		int rank =
		        (ksr_atspi_states_showing(it->states, w->t->visible_is_showing) ? 2 : 0) +
		        kind;
		if (rank > best_rank)
			best = key, best_rank = rank, ties = 0;
		else if (rank == best_rank)
			ties++;
	}
	return best_rank >= 3 && ties == 0 ? best : NULL;
}

/* The pick's ancestors from the root, by the items' parents: their count,
 * 0 when the chain leaves the cache, loops or is deeper than the walk goes. */
static int cache_chain(walk *w, const char *path, const char **chain, int cap)
{
	int n = 0;
	while (n < cap && n <= w->o.max_depth) {
		chain[n++] = path;
		if (strcmp(path, ATSPI_ROOT_PATH) == 0)
			return n;
		const cache_item *it = g_hash_table_lookup(w->items, path);
		if (!it || !it->parent)
			return 0;
		path = it->parent;
	}
	return 0;
}

/* Find mode answered from the app's cache: the tree is the pick's line of
 * ancestors, and only the pick is asked anything (its extents and actions,
 * and its toolkit role name where a role asked for needs it: one round
 * trip). false: walk as usual. */
static bool cache_find(walk *w, ksr_deadline d)
{
	if (!w->items || !w->o.find_name)
		return false;
	const char *pick = cache_pick(w, d);
	const char *chain[DEFAULT_DEPTH + 1];
	int n = pick ? cache_chain(w, pick, chain, DEFAULT_DEPTH + 1) : 0;
	if (n == 0 || n > w->o.max_nodes)
		return false;
	int i = -1;
	for (int k = n - 1; k >= 0; k--) {
		i = new_node(w, chain[k], i);
		const cache_item *it = g_hash_table_lookup(w->items, chain[k]);
		ksr_atspi_node *nd = &w->t->nodes[i];
		if (it) {
			fill_from_item(w, i, it);
		} else { /* the root, where the cache leaves it out: as the registry names it */
			nd->answered = true;
			nd->role = ksr_xstrdup("application");
			nd->name = ksr_xstrdup(w->app->name);
		}
		nd->n_children = -1; /* not asked */
	}
	if (wants_toolkit_name(w, w->role_num[i]))
		ask_role_name(w, i);
	ask_details(w, i);
	w->answer = i;
	w->scanned = (int)w->t->len;
	w->t->found_in_cache = true;
	return true;
}

void ksr_atspi_tree_clear(ksr_atspi_tree *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->len; i++) {
		ksr_atspi_node *n = &t->nodes[i];
		free(n->path);
		free(n->role);
		free(n->toolkit_role);
		free(n->keybinding);
		free(n->name);
		free(n->description);
		for (size_t k = 0; k < n->n_actions; k++)
			free(n->actions[k]);
		free(n->actions);
	}
	free(t->nodes);
	*t = (ksr_atspi_tree){0};
}

/* Full walk, once the tree's shape is known: every cached node's toolkit
 * role name, extents and actions, all at once. */
static void ask_cached_details(walk *w)
{
	for (size_t i = 0; i < w->t->len; i++)
		if (w->cached[i]) {
			if (wants_toolkit_name(w, w->role_num[i]))
				ask_role_name(w, (int)i);
			ask_details(w, (int)i);
		}
}

/* Dispatch answers until none is awaited, the match is known, d passes or
 * the run is cancelled. */
static ksr_wait await_answers(walk *w, ksr_deadline d)
{
	ksr_wait r = KSR_WAIT_READY;
	while (w->pending > 0 && !found(w) && r != KSR_WAIT_CANCELLED && !ksr_deadline_passed(d))
		r = ksr_atspi_iterate(w->a->ctx, d, false);
	return r;
}

int ksr_atspi_walk(ksr_atspi *a, const ksr_atspi_app *app, const ksr_atspi_walk_opts *opts,
                   ksr_deadline d, ksr_atspi_tree *out, ksr_err *err)
{
	*out = (ksr_atspi_tree){0};
	walk w = {.a = a, .app = app, .t = out, .cancel = g_cancellable_new()};
	w.o = opts ? *opts : (ksr_atspi_walk_opts){0};
	if (w.o.max_depth <= 0)
		w.o.max_depth = DEFAULT_DEPTH;
	if (w.o.max_nodes <= 0)
		w.o.max_nodes = DEFAULT_NODES;
	w.window_coords = ksr_atspi_app_window_coords(app);
	/* Qt 5's bridge reads a second argument of every Properties call: GetAll
	 * (one argument) reads past its list and the app segfaults. */
	w.by_get = app->toolkit && strncasecmp(app->toolkit, "Qt", 2) == 0;
	w.names = role_names_of(app);
	w.cand = w.answer = w.early = -1;
	/* GTK 4 here sets visible but never showing (docs/accessibility.md);
	 * the first showing answer clears this. */
	out->visible_is_showing = w.window_coords;
	int64_t t0 = ksr_now_ms();
	ksr_atspi_ctx_enter(a->ctx);
	load_cache(&w, d);
	out->cached = w.items != NULL;
	if (w.items && !w.o.find_name)
		prefetch_kids(&w);
	if (!cache_find(&w, d))
		add_node(&w, ATSPI_ROOT_PATH, -1);
	if (!w.o.find_name)
		add_known_kids(&w);
	ksr_wait r = await_answers(&w, d);
	if (!w.o.find_name && w.items && !w.o.names_only) {
		if (w.pending == 0 && r != KSR_WAIT_CANCELLED && !ksr_deadline_passed(d)) {
			ask_cached_details(&w);
			r = await_answers(&w, d);
		} else {
			cut(out, "time"); /* the shape, but not the cached nodes' details */
		}
	}
	/* The whole tree was seen: what is left to ask is only the named nodes'
	 * roles (find mode without a showing match), which no bound cuts. */
	bool complete = w.pending == 0;
	if (w.o.find_name && !found(&w) && complete && r != KSR_WAIT_CANCELLED &&
	    !ksr_deadline_passed(d)) {
		ask_named_roles(&w);
		r = await_answers(&w, d);
	}
	out->found_early = found(&w);
	if (w.pending > 0) {
		if (out->found_early || complete)
			w.stopped = true; /* the rest is of no use: not a cut, not unanswered */
		else
			cut(out, "time");
		g_cancellable_cancel(w.cancel);
		ksr_atspi_drain(a->ctx, &w.pending);
	}
	ksr_atspi_ctx_leave(a->ctx);
	g_object_unref(w.cancel);
	free(w.core_left);
	free(w.det_left);
	free(w.cached);
	free(w.role_num);
	free(w.states_in);
	free(w.roles_asked);
	free(w.detailed);
	for (size_t i = 0; i < out->len; i++) { /* a walk cut short leaves some */
		for (int c = 0; c < w.kids[i].n; c++)
			free(w.kids[i].paths[c]);
		free(w.kids[i].paths);
	}
	free(w.kids);
	free(w.kids_wait);
	if (w.items)
		g_hash_table_destroy(w.items);
	out->ms = ksr_now_ms() - t0;
	if (r == KSR_WAIT_CANCELLED)
		ksr_err_set(err, "the accessibility walk was cancelled");
	else if (!out->nodes[0].answered)
		ksr_err_set(err,
		            "the app (%s) did not answer AT-SPI calls within %d ms "
		            "(is it hung?)",
		            app->name ? app->name : app->bus, KSR_ATSPI_CALL_MS);
	else
		return 0;
	ksr_atspi_tree_clear(out); /* a failed walk leaves nothing to free */
	return -1;
}
