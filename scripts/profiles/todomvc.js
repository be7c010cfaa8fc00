// A Speedometer-like TodoMVC workload without a DOM, for `hetlab profile` (scripts/measure-profiles.sh).
// Speedometer 2 runs TodoMVC in many frameworks: add 100 todos, complete them all, delete them all,
// with the framework re-rendering the list. Here each "framework" is one way of keeping the model
// and producing the view (class instances with a keyed re-render, closures with a virtual tree and a
// diff, immutable updates with spread, string templates), and rendering makes HTML strings; the
// app state is saved to a storage map as JSON after every change, as TodoMVC's localStorage is.
"use strict";
var ITEMS = 70; // todos per app (Speedometer adds 100; 70 keeps the run near 1e9 instructions)
var storage = new Map();
function save(key, todos) { storage.set(key, JSON.stringify(todos)); }
function load(key) { return JSON.parse(storage.get(key) || "[]"); }
function escapeHtml(s) {
  return s.replace(/[&<>"']/g, function (c) {
    return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c];
  });
}
function itemHtml(t) {
  return '<li data-id="' + t.id + '" class="' + (t.completed ? "completed" : "") + '"><div class="view">' +
    '<input class="toggle" type="checkbox"' + (t.completed ? " checked" : "") + "><label>" +
    escapeHtml(t.title) + '</label><button class="destroy"></button></div></li>';
}
function footer(todos, filter) {
  var left = todos.filter(function (t) { return !t.completed; }).length;
  return '<footer><span class="todo-count"><strong>' + left + "</strong> item" + (left === 1 ? "" : "s") +
    ' left</span><ul class="filters"><li>' + filter + "</li></ul></footer>";
}

// 1: classes and a keyed re-render (Backbone/Ember style)
function Todo(id, title) { this.id = id; this.title = title; this.completed = false; }
Todo.prototype.toggle = function () { this.completed = !this.completed; };
function classApp(n) {
  var todos = [], views = {}, html = "";
  function render() {
    var parts = [];
    for (var i = 0; i < todos.length; i++) {
      var t = todos[i], key = t.id + ":" + t.completed + ":" + t.title;
      if (views[t.id] === undefined || views[t.id].key !== key) views[t.id] = { key: key, html: itemHtml(t) };
      parts.push(views[t.id].html);
    }
    html = "<ul>" + parts.join("") + "</ul>" + footer(todos, "all");
    save("class", todos);
  }
  for (var i = 0; i < n; i++) { todos.push(new Todo(i, "Something to do " + i)); render(); }
  for (i = 0; i < n; i++) { todos[i].toggle(); render(); }
  while (todos.length) { delete views[todos[0].id]; todos.shift(); render(); }
  return html.length;
}

// 2: closures, a virtual tree and a diff (React/Preact style)
function h(tag, props, children) { return { tag: tag, props: props, children: children }; }
function diff(a, b, patches) {
  if (!a || !b || a.tag !== b.tag) { patches.push(b); return; }
  for (var k in b.props) if (a.props[k] !== b.props[k]) patches.push(k);
  var n = Math.max(a.children.length, b.children.length);
  for (var i = 0; i < n; i++) {
    var x = a.children[i], y = b.children[i];
    if (typeof y === "string" || typeof x === "string") { if (x !== y) patches.push(y); } else diff(x, y, patches);
  }
}
function vdomApp(n) {
  var state = { todos: [], nextId: 0 }, tree = null, patches = 0;
  function view(s) {
    return h("section", { cls: "todoapp" }, [h("ul", { cls: "todo-list" }, s.todos.map(function (t) {
      return h("li", { cls: t.completed ? "completed" : "", key: t.id }, [h("label", {}, [t.title])]);
    })), h("footer", {}, [String(s.todos.filter(function (t) { return !t.completed; }).length)])]);
  }
  function update() { var next = view(state), p = []; diff(tree, next, p); patches += p.length; tree = next; save("vdom", state.todos); }
  for (var i = 0; i < n; i++) { state.todos.push({ id: state.nextId++, title: "Task number " + i, completed: false }); update(); }
  state.todos.forEach(function (t) { t.completed = true; update(); });
  while (state.todos.length) { state.todos.splice(0, 1); update(); }
  return patches;
}

// 3: immutable updates with spread and a reducer (Redux style)
function reducer(state, action) {
  switch (action.type) {
    case "add": return { ...state, todos: [...state.todos, { id: state.next, title: action.title, completed: false }], next: state.next + 1 };
    case "toggle": return { ...state, todos: state.todos.map((t) => (t.id === action.id ? { ...t, completed: !t.completed } : t)) };
    case "remove": return { ...state, todos: state.todos.filter((t) => t.id !== action.id) };
    default: return state;
  }
}
function reduxApp(n) {
  let state = { todos: [], next: 0 }, out = 0;
  const dispatch = (a) => { state = reducer(state, a); out += state.todos.map(itemHtml).join("").length; save("redux", state.todos); };
  for (let i = 0; i < n; i++) dispatch({ type: "add", title: `Redux todo ${i} <b>bold</b>` });
  for (let i = 0; i < n; i++) dispatch({ type: "toggle", id: i });
  for (let i = 0; i < n; i++) dispatch({ type: "remove", id: i });
  return out;
}

// 4: string templates and a sorted, filtered view (jQuery/vanilla style), with a reload from storage
function vanillaApp(n) {
  var todos = [], out = 0;
  function render(filter) {
    var shown = todos.filter(function (t) { return filter === "all" || (filter === "done") === t.completed; });
    shown.sort(function (a, b) { return a.title < b.title ? -1 : a.title > b.title ? 1 : 0; });
    out += shown.map(itemHtml).join("\n").length + footer(todos, filter).length;
    save("vanilla", todos);
  }
  for (var i = 0; i < n; i++) { todos.push({ id: i, title: "Vanilla " + ((i * 7919) % n), completed: false }); render("all"); }
  todos = load("vanilla");
  for (i = 0; i < n; i++) { todos[i].completed = true; render(i % 2 ? "done" : "active"); }
  for (i = n - 1; i >= 0; i--) { todos.splice(i, 1); render("all"); }
  return out;
}

var apps = [classApp, vdomApp, reduxApp, vanillaApp];
var rounds = 1; // one pass of the four apps
var check = 0;
for (var r = 0; r < rounds; r++) for (var a = 0; a < apps.length; a++) check += apps[a](ITEMS);
check;
