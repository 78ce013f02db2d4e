"""What a suite may hold beyond its base (digits, wine, vision models and data).

The demo builds only the base (`generate_suite.py --base-only`), which skips the ~75 s of jax training that only
`npm run study` and the tests use. Kept free of heavy imports: the generator reads it before deciding to build.
"""

OPTIONAL_PARTS = ('study',)
