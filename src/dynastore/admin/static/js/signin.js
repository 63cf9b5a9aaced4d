// Signing in: on a server with --auth sigv4 the console signs its requests with an access key (an admin user's,
// for the partition, contributor, trigger and clock views). The key stays in this tab's session storage only.

import { credentials, serverInfo, signIn } from "./api.js";
import { errorBox, field, h, replace } from "./dom.js";

let reason = null; // the refusal that brought the user here, shown above the form

export function because(error) {
  reason = error;
}

export async function render(main) {
  const { verifies_signatures: signs } = await serverInfo();
  if (!signs) {
    return replace(main, reason ? errorBox(reason) : null, h("section", { class: "card", id: "no-signin" }, h("h2", {}, "No sign-in needed"),
      h("p", {}, "This server does not verify signatures (it runs without --auth sigv4): the console, like any ",
        "client, works without a key.")));
  }
  const current = credentials();
  const input = (name, type = "text", value = "") =>
    h("input", { name, type, value, autocomplete: "off", spellcheck: "false" });
  const form = h("form", { class: "signin" },
    h("h2", {}, "Sign in"),
    h("p", { class: "muted" }, "This server verifies signatures (--auth sigv4): give an access key of one of its ",
      "users (dynastore users add NAME --admin). It is kept in this tab only."),
    field("Access key id", input("accessKeyId", "text", current?.accessKeyId ?? "")),
    field("Secret access key", input("secretAccessKey", "password")),
    field("Session token (temporary credentials)", input("sessionToken", "password")),
    field("Region", input("region", "text", current?.region ?? "us-east-1")),
    h("button", { type: "submit" }, "Sign in"),
    current ? h("button", { type: "button", class: "signout" }, "Sign out") : null);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const given = Object.fromEntries([...data.entries()].map(([k, v]) => [k, String(v).trim()]));
    if (!given.sessionToken) delete given.sessionToken;
    signIn(given);
    location.hash = "#/tables";
  });
  form.querySelector(".signout")?.addEventListener("click", () => {
    signIn(null);
    location.hash = "#/signin";
  });
  replace(main, reason ? errorBox(reason) : null, form);
}
