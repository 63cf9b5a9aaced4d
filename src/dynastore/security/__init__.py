"""Who is calling and what they may do: the caller's identity (caller.py), how a request proves it, and the
policies that allow or deny each action."""
