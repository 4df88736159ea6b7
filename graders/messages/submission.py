"""A submission as files, refused before any grade: a path that holds nothing to grade, a .zip that cannot be
unpacked safely, a folder that cannot be read, a name that cannot be a student's (graders/submission/).
"""

# A path that holds nothing to grade (graders.submission.layout.student_files): the command says it, and grades nothing.
SUBMISSION_MISSING = "{submission}: no such folder"
SUBMISSION_NOT_A_FOLDER = "{submission}: not a folder (expected a folder laid out like exercises/)"
SUBMISSION_NO_MODULE = "{submission}: holds none of {files}; expected a folder laid out like exercises/"
SUBMISSION_TOO_LARGE = "{submission}: its .py files hold {size} bytes, more than {most}"
ZIP_UNREADABLE = "{name}: not a readable .zip file ({error})"
ZIP_UNSAFE = "{name}: holds {member!r}, a path that leaves the folder (absolute, or with '..')"
ZIP_LINK = "{name}: holds {member!r}, a link; only plain files and folders are unpacked"
ZIP_TOO_BIG = "{name}: unpacks to more than {limit:,} bytes"
ZIP_TOO_MANY = "{name}: holds more than {limit:,} files"
ZIP_ENCRYPTED = "{name}: holds {member!r}, which is encrypted"
SEVERAL_PACKAGES = ("{name}: holds several folders laid out like exercises/ ({found}); "
                    "expected one")
SUBMISSION_LINK = ("{name}: a symbolic link, not a folder or a .zip; hand in the folder itself (a link would grade "
                   "whatever it points to)")
SUBMISSION_UNREADABLE = "{name}: a folder in it cannot be read ({error})"
SUBMISSION_TOO_MANY = ("{name}: more than {limit:,} files and folders within {depth} levels, where the folder laid out "
                       "like exercises/ was looked for; hand in that folder alone")
SUBMISSION_UNHASHED = "{name}: its files could not be read ({error})"
# Why a name cannot be a student's (graders.submission.intake.name_problem): said of a merged shard's row too.
NAME_EMPTY = "an empty name"
NAME_SEPARATOR = "a name with a path separator or a NUL, which no folder has"
NAME_HIDDEN = "a hidden name (it starts with '.') or one grade-all skips (__pycache__, .git, ...)"
