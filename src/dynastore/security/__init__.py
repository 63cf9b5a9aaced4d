"""Who is calling and what they may do, in one package: how a request proves its identity (SigV4: sigv4.py,
authenticator.py, over the credentials and users of credentials.py and users.py), the caller (caller.py), the
policy language and IAM's evaluation (patterns.py, conditions.py, policy_documents.py, policy_evaluation.py), the
identity policies of users and groups (identity_policies.py) and a request's authorization (authorization.py).
The API layer only says which checks each request needs (api/authorization.py)."""
