<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="en" sourcelanguage="en">
<context>
    <name>ApiServerController</name>
    <message>
        <source>The server was not started: %1 needs an API key.</source>
        <translation>The server was not started: %1 needs an API key.</translation>
    </message>
    <message>
        <source>The server was not started: %1</source>
        <translation>The server was not started: %1</translation>
    </message>
    <message>
        <source>Enter the address to listen on, e.g. 127.0.0.1.</source>
        <translation>Enter the address to listen on, e.g. 127.0.0.1.</translation>
    </message>
    <message>
        <source>The port must be between 0 and 65535.</source>
        <translation>The port must be between 0 and 65535.</translation>
    </message>
    <message>
        <source>%1 can be reached from other machines: tick &quot;Allow other machines&quot; to serve there.</source>
        <translation>%1 can be reached from other machines: tick &quot;Allow other machines&quot; to serve there.</translation>
    </message>
    <message>
        <source>Serving to other machines needs an API key.</source>
        <translation>Serving to other machines needs an API key.</translation>
    </message>
    <message>
        <source>The server could not start on %1:%2: %3</source>
        <translation>The server could not start on %1:%2: %3</translation>
    </message>
    <message>
        <source>&apos;%1&apos; is not a web page&apos;s origin: write scheme://host[:port], e.g. http://localhost:3000, or * for any page.</source>
        <translation>&apos;%1&apos; is not a web page&apos;s origin: write scheme://host[:port], e.g. http://localhost:3000, or * for any page.</translation>
    </message>
</context>
<context>
    <name>AppController</name>
    <message>
        <source>OpenAI API server (Settings &gt; Server): %1</source>
        <translation>OpenAI API server (Settings &gt; Server): %1</translation>
    </message>
    <message>
        <source>Pane %1 answers with the main model: %2</source>
        <translation>Pane %1 answers with the main model: %2</translation>
    </message>
</context>
<context>
    <name>AppOptions</name>
    <message>
        <source>Chat with a local language model.</source>
        <translation>Chat with a local language model.</translation>
    </message>
    <message>
        <source>Model file or folder (default: $PAGEDCHAT_MODEL, else %1).</source>
        <translation>Model file or folder (default: $PAGEDCHAT_MODEL, else %1).</translation>
    </message>
    <message>
        <source>Sentencepiece tokenizer model (default: beside the model).</source>
        <translation>Sentencepiece tokenizer model (default: beside the model).</translation>
    </message>
    <message>
        <source>Folder for the chat database (default: %1).</source>
        <translation>Folder for the chat database (default: %1).</translation>
    </message>
    <message>
        <source>Chat template: auto (the model&apos;s own), a built-in (llama-2, mistral, chatml, zephyr, vicuna, llama3, deepseek-r1, phi3, gemma, gemma4, none) or a .jinja file.</source>
        <translation>Chat template: auto (the model&apos;s own), a built-in (llama-2, mistral, chatml, zephyr, vicuna, llama3, deepseek-r1, phi3, gemma, gemma4, none) or a .jinja file.</translation>
    </message>
    <message>
        <source>Where the model runs: cpu, cuda, cuda:N or auto (default: cpu).</source>
        <translation>Where the model runs: cpu, cuda, cuda:N or auto (default: cpu).</translation>
    </message>
</context>
<context>
    <name>AppToolBar</name>
    <message>
        <source>System</source>
        <translation>System</translation>
    </message>
    <message>
        <source>Main tool bar</source>
        <translation>Main tool bar</translation>
    </message>
    <message>
        <source>Hide the conversation list</source>
        <translation>Hide the conversation list</translation>
    </message>
    <message>
        <source>Show the conversation list</source>
        <translation>Show the conversation list</translation>
    </message>
    <message>
        <source>PagedChat</source>
        <translation>PagedChat</translation>
    </message>
    <message>
        <source>Language: %1</source>
        <translation>Language: %1</translation>
    </message>
    <message>
        <source>Choose the language</source>
        <translation>Choose the language</translation>
    </message>
    <message>
        <source>The language of PagedChat; System follows the system settings</source>
        <translation>The language of PagedChat; System follows the system settings</translation>
    </message>
    <message>
        <source>+ Add pane</source>
        <translation>+ Add pane</translation>
    </message>
    <message>
        <source>Add a chat pane</source>
        <translation>Add a chat pane</translation>
    </message>
    <message>
        <source>Open another chat side by side (up to %1)</source>
        <translation>Open another chat side by side (up to %1)</translation>
    </message>
    <message numerus="yes">
        <source>%1 of %n panes</source>
        <translation>
            <numerusform>%1 of %n pane</numerusform>
            <numerusform>%1 of %n panes</numerusform>
        </translation>
    </message>
    <message>
        <source>Model: loading %1…</source>
        <translation>Model: loading %1…</translation>
    </message>
    <message>
        <source>Model: %1</source>
        <translation>Model: %1</translation>
    </message>
    <message>
        <source>Model: none</source>
        <translation>Model: none</translation>
    </message>
    <message>
        <source>Choose the model</source>
        <translation>Choose the model</translation>
    </message>
    <message>
        <source>Open a model, load a recent one, or unload it (Ctrl+O)</source>
        <translation>Open a model, load a recent one, or unload it (Ctrl+O)</translation>
    </message>
    <message>
        <source>Engine</source>
        <translation>Engine</translation>
    </message>
    <message>
        <source>Show the live engine view</source>
        <translation>Show the live engine view</translation>
    </message>
    <message>
        <source>Requests, KV-cache blocks and speed, live (Ctrl+Shift+E)</source>
        <translation>Requests, KV-cache blocks and speed, live (Ctrl+Shift+E)</translation>
    </message>
    <message>
        <source>Settings</source>
        <translation>Settings</translation>
    </message>
    <message>
        <source>Settings (Ctrl+,)</source>
        <translation>Settings (Ctrl+,)</translation>
    </message>
</context>
<context>
    <name>AppearancePage</name>
    <message>
        <source>Appearance</source>
        <translation>Appearance</translation>
    </message>
    <message>
        <source>System</source>
        <translation>System</translation>
    </message>
    <message>
        <source>Light</source>
        <translation>Light</translation>
    </message>
    <message>
        <source>Dark</source>
        <translation>Dark</translation>
    </message>
    <message>
        <source>Theme</source>
        <translation>Theme</translation>
    </message>
    <message>
        <source>Font size</source>
        <translation>Font size</translation>
    </message>
    <message>
        <source>Font size in pixels</source>
        <translation>Font size in pixels</translation>
    </message>
    <message>
        <source>Language</source>
        <translation>Language</translation>
    </message>
    <message>
        <source>System follows the desktop&apos;s light or dark colours. Shortcuts: Ctrl+N new chat, Ctrl+Shift+N new pane, Ctrl+W close pane, Enter send, Shift+Enter new line, Esc stop, Ctrl+, settings.</source>
        <translation>System follows the desktop&apos;s light or dark colours. Shortcuts: Ctrl+N new chat, Ctrl+Shift+N new pane, Ctrl+W close pane, Enter send, Shift+Enter new line, Esc stop, Ctrl+, settings.</translation>
    </message>
</context>
<context>
    <name>BlindCompare</name>
    <message>
        <source>Vote once every pane has finished its answer.</source>
        <translation>Vote once every pane has finished its answer.</translation>
    </message>
    <message>
        <source>Pane %1 is not part of this comparison.</source>
        <translation>Pane %1 is not part of this comparison.</translation>
    </message>
    <message>
        <source>The vote could not be saved: %1</source>
        <translation>The vote could not be saved: %1</translation>
    </message>
</context>
<context>
    <name>ChatInput</name>
    <message>
        <source>Message input area</source>
        <translation>Message input area</translation>
    </message>
    <message>
        <source>Type a message…</source>
        <translation>Type a message…</translation>
    </message>
    <message>
        <source>Message for pane %1</source>
        <translation>Message for pane %1</translation>
    </message>
    <message>
        <source>Enter sends, Shift+Enter adds a line</source>
        <translation>Enter sends, Shift+Enter adds a line</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>Stop</translation>
    </message>
    <message>
        <source>Send</source>
        <translation>Send</translation>
    </message>
    <message>
        <source>Stop generating in pane %1</source>
        <translation>Stop generating in pane %1</translation>
    </message>
    <message>
        <source>Send message in pane %1</source>
        <translation>Send message in pane %1</translation>
    </message>
    <message>
        <source>Enter to send · Shift+Enter for a new line</source>
        <translation>Enter to send · Shift+Enter for a new line</translation>
    </message>
    <message>
        <source>Send message to all panes</source>
        <translation>Send message to all panes</translation>
    </message>
    <message>
        <source>Send to all panes</source>
        <translation>Send to all panes</translation>
    </message>
    <message>
        <source>Enter sends the message to every pane at once</source>
        <translation>Enter sends the message to every pane at once</translation>
    </message>
    <message>
        <source>Message…</source>
        <translation>Message…</translation>
    </message>
    <message>
        <source>Shift+Enter: new line</source>
        <translation>Shift+Enter: new line</translation>
    </message>
    <message>
        <source>The file dialog could not be opened (a Qt Quick Dialogs module is missing; on Debian install qml6-module-qt-labs-folderlistmodel).</source>
        <translation>The file dialog could not be opened (a Qt Quick Dialogs module is missing; on Debian install qml6-module-qt-labs-folderlistmodel).</translation>
    </message>
    <message>
        <source>Attach images</source>
        <translation>Attach images</translation>
    </message>
    <message>
        <source>Images (*.png *.jpg *.jpeg *.webp)</source>
        <translation>Images (*.png *.jpg *.jpeg *.webp)</translation>
    </message>
    <message>
        <source>All files (*)</source>
        <translation>All files (*)</translation>
    </message>
    <message>
        <source>Attached image, %1 by %2 pixels</source>
        <translation>Attached image, %1 by %2 pixels</translation>
    </message>
    <message>
        <source>Remove image %1</source>
        <translation>Remove image %1</translation>
    </message>
    <message>
        <source>Remove this image</source>
        <translation>Remove this image</translation>
    </message>
    <message>
        <source>This model cannot read images: remove them to send.</source>
        <translation>This model cannot read images: remove them to send.</translation>
    </message>
    <message>
        <source>Attach an image in pane %1</source>
        <translation>Attach an image in pane %1</translation>
    </message>
    <message>
        <source>Attach an image (PNG, JPEG or WebP)</source>
        <translation>Attach an image (PNG, JPEG or WebP)</translation>
    </message>
</context>
<context>
    <name>ChatPane</name>
    <message>
        <source>Chat pane %1</source>
        <translation>Chat pane %1</translation>
    </message>
    <message>
        <source>New chat</source>
        <translation>New chat</translation>
    </message>
    <message>
        <source>No model is loaded. Download one from Hugging Face, or open a model file or folder you have (Ctrl+O).</source>
        <translation>No model is loaded. Download one from Hugging Face, or open a model file or folder you have (Ctrl+O).</translation>
    </message>
    <message>
        <source>Download a model…</source>
        <translation>Download a model…</translation>
    </message>
    <message>
        <source>Download a model from Hugging Face</source>
        <translation>Download a model from Hugging Face</translation>
    </message>
    <message>
        <source>Open a model…</source>
        <translation>Open a model…</translation>
    </message>
    <message>
        <source>Open a model file or folder</source>
        <translation>Open a model file or folder</translation>
    </message>
    <message numerus="yes">
        <source>The conversation outgrew the model&apos;s context: %n earlier message(s), dimmed above, were not sent. Settings, Engine chooses which ones go, or whether to stop instead.</source>
        <translation>
            <numerusform>The conversation outgrew the model&apos;s context: %n earlier message, dimmed above, was not sent. Settings, Engine chooses which ones go, or whether to stop instead.</numerusform>
            <numerusform>The conversation outgrew the model&apos;s context: %n earlier messages, dimmed above, were not sent. Settings, Engine chooses which ones go, or whether to stop instead.</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>ChatStore</name>
    <message>
        <source>User</source>
        <translation>User</translation>
    </message>
    <message>
        <source>Assistant</source>
        <translation>Assistant</translation>
    </message>
    <message>
        <source>System</source>
        <translation>System</translation>
    </message>
    <message>
        <source>(cut off)</source>
        <translation>(cut off)</translation>
    </message>
    <message>
        <source>Tool result</source>
        <translation>Tool result</translation>
    </message>
    <message>
        <source>Tool call:</source>
        <translation>Tool call:</translation>
    </message>
    <message>
        <source>[image: %1 x %2, %3]</source>
        <translation>[image: %1 x %2, %3]</translation>
    </message>
</context>
<context>
    <name>CompareBar</name>
    <message>
        <source>Blind compare</source>
        <translation>Blind compare</translation>
    </message>
    <message>
        <source>Compare the panes&apos; answers without knowing their settings.</source>
        <translation>Compare the panes&apos; answers without knowing their settings.</translation>
    </message>
    <message>
        <source>Waiting for every pane to finish…</source>
        <translation>Waiting for every pane to finish…</translation>
    </message>
    <message>
        <source>Which answer is better?</source>
        <translation>Which answer is better?</translation>
    </message>
    <message>
        <source>You voted a tie. Settings are shown again.</source>
        <translation>You voted a tie. Settings are shown again.</translation>
    </message>
    <message>
        <source>You picked %1 (pane %2). Settings are shown again.</source>
        <translation>You picked %1 (pane %2). Settings are shown again.</translation>
    </message>
    <message>
        <source>Type a prompt: it goes to every pane; labels are shuffled.</source>
        <translation>Type a prompt: it goes to every pane; labels are shuffled.</translation>
    </message>
    <message>
        <source>Blind compare mode</source>
        <translation>Blind compare mode</translation>
    </message>
    <message>
        <source>%1 is better</source>
        <translation>%1 is better</translation>
    </message>
    <message>
        <source>Tie</source>
        <translation>Tie</translation>
    </message>
    <message>
        <source>Both are as good: tie</source>
        <translation>Both are as good: tie</translation>
    </message>
</context>
<context>
    <name>ConversationDelegate</name>
    <message>
        <source>Open conversation %1</source>
        <translation>Open conversation %1</translation>
    </message>
    <message>
        <source>d MMM, hh:mm</source>
        <extracomment>Date format of a conversation&apos;s last activity (QDateTime format: day, month, time)</extracomment>
        <translation>d MMM, hh:mm</translation>
    </message>
    <message>
        <source>Last activity %1</source>
        <translation>Last activity %1</translation>
    </message>
    <message>
        <source>Delete conversation %1</source>
        <translation>Delete conversation %1</translation>
    </message>
    <message>
        <source>Delete conversation</source>
        <translation>Delete conversation</translation>
    </message>
    <message>
        <source>New title</source>
        <translation>New title</translation>
    </message>
    <message>
        <source>Pinned: %1</source>
        <translation>Pinned: %1</translation>
    </message>
    <message>
        <source>Actions for conversation %1</source>
        <translation>Actions for conversation %1</translation>
    </message>
    <message>
        <source>Rename, pin, export, delete</source>
        <translation>Rename, pin, export, delete</translation>
    </message>
    <message>
        <source>Rename</source>
        <translation>Rename</translation>
    </message>
    <message>
        <source>Unpin</source>
        <translation>Unpin</translation>
    </message>
    <message>
        <source>Pin</source>
        <translation>Pin</translation>
    </message>
    <message>
        <source>Export as Markdown…</source>
        <translation>Export as Markdown…</translation>
    </message>
    <message>
        <source>Export as JSON…</source>
        <translation>Export as JSON…</translation>
    </message>
    <message>
        <source>Delete</source>
        <translation>Delete</translation>
    </message>
    <message>
        <source>d MMM yyyy, hh:mm</source>
        <extracomment>Date format of a conversation&apos;s last activity in another year (QDateTime format: day, month, year, time)</extracomment>
        <translation>d MMM yyyy, hh:mm</translation>
    </message>
</context>
<context>
    <name>ConversationList</name>
    <message>
        <source>Conversations</source>
        <translation>Conversations</translation>
    </message>
    <message>
        <source>Chats</source>
        <translation>Chats</translation>
    </message>
    <message>
        <source>New chat</source>
        <translation>New chat</translation>
    </message>
    <message>
        <source>New conversation</source>
        <translation>New conversation</translation>
    </message>
    <message>
        <source>Conversation list</source>
        <translation>Conversation list</translation>
    </message>
    <message>
        <source>Scroll conversations</source>
        <translation>Scroll conversations</translation>
    </message>
    <message>
        <source>No conversations yet. Type a message in a pane to start one.</source>
        <translation>No conversations yet. Type a message in a pane to start one.</translation>
    </message>
    <message>
        <source>Export conversation as JSON</source>
        <translation>Export conversation as JSON</translation>
    </message>
    <message>
        <source>Export conversation as Markdown</source>
        <translation>Export conversation as Markdown</translation>
    </message>
    <message>
        <source>JSON files (*.json)</source>
        <translation>JSON files (*.json)</translation>
    </message>
    <message>
        <source>Markdown files (*.md)</source>
        <translation>Markdown files (*.md)</translation>
    </message>
    <message>
        <source>Import a conversation (PagedChat JSON)</source>
        <translation>Import a conversation (PagedChat JSON)</translation>
    </message>
    <message>
        <source>All files (*)</source>
        <translation>All files (*)</translation>
    </message>
    <message>
        <source>Search chats</source>
        <translation>Search chats</translation>
    </message>
    <message>
        <source>Search all chats (Ctrl+F)</source>
        <translation>Search all chats (Ctrl+F)</translation>
    </message>
    <message>
        <source>Import conversation</source>
        <translation>Import conversation</translation>
    </message>
    <message>
        <source>Import a conversation from a JSON file</source>
        <translation>Import a conversation from a JSON file</translation>
    </message>
    <message>
        <source>Deleted “%1”</source>
        <translation>Deleted “%1”</translation>
    </message>
    <message>
        <source>Undo</source>
        <translation>Undo</translation>
    </message>
    <message>
        <source>Undo delete</source>
        <translation>Undo delete</translation>
    </message>
    <message>
        <source>The file dialog could not be opened (a Qt Quick Dialogs module is missing; on Debian install qml6-module-qt-labs-folderlistmodel).</source>
        <translation>The file dialog could not be opened (a Qt Quick Dialogs module is missing; on Debian install qml6-module-qt-labs-folderlistmodel).</translation>
    </message>
    <message>
        <source>Deleted “%1” (+%2 more)</source>
        <translation>Deleted “%1” (+%2 more)</translation>
    </message>
    <message>
        <source>Save</source>
        <translation>Save</translation>
    </message>
    <message>
        <source>Import</source>
        <translation>Import</translation>
    </message>
</context>
<context>
    <name>ConversationListModel</name>
    <message>
        <source>Pinned</source>
        <translation>Pinned</translation>
    </message>
    <message>
        <source>Today</source>
        <translation>Today</translation>
    </message>
    <message>
        <source>Yesterday</source>
        <translation>Yesterday</translation>
    </message>
    <message>
        <source>Previous 7 days</source>
        <translation>Previous 7 days</translation>
    </message>
    <message>
        <source>Older</source>
        <translation>Older</translation>
    </message>
</context>
<context>
    <name>DownloadController</name>
    <message>
        <source>Hugging Face folder</source>
        <translation>Hugging Face folder</translation>
    </message>
    <message>
        <source>Download stopped; downloading again resumes it.</source>
        <translation>Download stopped; downloading again resumes it.</translation>
    </message>
    <message>
        <source>%1 GB</source>
        <translation>%1 GB</translation>
    </message>
    <message>
        <source>%1 MB</source>
        <translation>%1 MB</translation>
    </message>
    <message>
        <source>%1 kB</source>
        <translation>%1 kB</translation>
    </message>
    <message>
        <source>%1 bytes</source>
        <translation>%1 bytes</translation>
    </message>
    <message>
        <source>Starting the download…</source>
        <translation>Starting the download…</translation>
    </message>
    <message>
        <source>No repository with GGUF files matches.</source>
        <translation>No repository with GGUF files matches.</translation>
    </message>
    <message>
        <source>%1 of %2, %3/s</source>
        <translation>%1 of %2, %3/s</translation>
    </message>
    <message>
        <source>Downloaded and checked: %1</source>
        <translation>Downloaded and checked: %1</translation>
    </message>
</context>
<context>
    <name>DownloadDialog</name>
    <message>
        <source>Download a model</source>
        <translation>Download a model</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>Close</translation>
    </message>
    <message>
        <source>Close the download dialog</source>
        <translation>Close the download dialog</translation>
    </message>
    <message>
        <source>Search, or paste a repository (e.g. Qwen/Qwen3-4B-GGUF)</source>
        <translation>Search, or paste a repository (e.g. Qwen/Qwen3-4B-GGUF)</translation>
    </message>
    <message>
        <source>Search the Hugging Face hub</source>
        <translation>Search the Hugging Face hub</translation>
    </message>
    <message>
        <source>Search</source>
        <translation>Search</translation>
    </message>
    <message>
        <source>Repositories found</source>
        <translation>Repositories found</translation>
    </message>
    <message>
        <source>%1 (gated)</source>
        <translation>%1 (gated)</translation>
    </message>
    <message>
        <source>List the files of %1</source>
        <translation>List the files of %1</translation>
    </message>
    <message>
        <source>Back to results</source>
        <translation>Back to results</translation>
    </message>
    <message>
        <source>Files of %1</source>
        <translation>Files of %1</translation>
    </message>
    <message>
        <source>%1, %2%3%4</source>
        <translation>%1, %2%3%4</translation>
    </message>
    <message>
        <source>, may not fit this computer</source>
        <translation>, may not fit this computer</translation>
    </message>
    <message>
        <source>, recommended</source>
        <translation>, recommended</translation>
    </message>
    <message>
        <source>fits</source>
        <translation>fits</translation>
    </message>
    <message>
        <source>may not fit</source>
        <translation>may not fit</translation>
    </message>
    <message>
        <source>recommended</source>
        <translation>recommended</translation>
    </message>
    <message>
        <source>Download</source>
        <translation>Download</translation>
    </message>
    <message>
        <source>Download the chosen file</source>
        <translation>Download the chosen file</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>Stop</translation>
    </message>
    <message>
        <source>Stop the download</source>
        <translation>Stop the download</translation>
    </message>
    <message>
        <source>Load it</source>
        <translation>Load it</translation>
    </message>
    <message>
        <source>Load the downloaded model</source>
        <translation>Load the downloaded model</translation>
    </message>
    <message>
        <source>Download progress</source>
        <translation>Download progress</translation>
    </message>
    <message>
        <source>On this computer (%1)</source>
        <translation>On this computer (%1)</translation>
    </message>
    <message>
        <source>Downloaded models</source>
        <translation>Downloaded models</translation>
    </message>
    <message>
        <source>%1 (%2)</source>
        <translation>%1 (%2)</translation>
    </message>
    <message>
        <source>Load %1</source>
        <translation>Load %1</translation>
    </message>
    <message>
        <source>No model downloaded yet.</source>
        <translation>No model downloaded yet.</translation>
    </message>
    <message numerus="yes">
        <source>%n download(s)</source>
        <translation>
            <numerusform>%n download</numerusform>
            <numerusform>%n downloads</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n file(s)</source>
        <translation>
            <numerusform>%n file</numerusform>
            <numerusform>%n files</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>EngineSettings</name>
    <message>
        <source>Engine settings</source>
        <translation>Engine settings</translation>
    </message>
    <message>
        <source>KV cache size (MiB, 0 = automatic)</source>
        <translation>KV cache size (MiB, 0 = automatic)</translation>
    </message>
    <message>
        <source>KV cache size in MiB</source>
        <translation>KV cache size in MiB</translation>
    </message>
    <message>
        <source>Max concurrent sequences</source>
        <translation>Max concurrent sequences</translation>
    </message>
    <message>
        <source>Maximum concurrent sequences</source>
        <translation>Maximum concurrent sequences</translation>
    </message>
    <message>
        <source>Block size (tokens per KV block)</source>
        <translation>Block size (tokens per KV block)</translation>
    </message>
    <message>
        <source>Block size in tokens</source>
        <translation>Block size in tokens</translation>
    </message>
    <message>
        <source>CPU threads (0 = all cores)</source>
        <translation>CPU threads (0 = all cores)</translation>
    </message>
    <message>
        <source>CPU threads</source>
        <translation>CPU threads</translation>
    </message>
    <message>
        <source>Applying reloads the model: replies in progress are stopped and keep their text so far.</source>
        <translation>Applying reloads the model: replies in progress are stopped and keep their text so far.</translation>
    </message>
    <message>
        <source>Reloading the model… %1%</source>
        <translation>Reloading the model… %1%</translation>
    </message>
    <message>
        <source>The model did not load with these settings: %1</source>
        <translation>The model did not load with these settings: %1</translation>
    </message>
    <message>
        <source>Saved; they apply when a model is loaded.</source>
        <translation>Saved; they apply when a model is loaded.</translation>
    </message>
    <message>
        <source>Model load progress</source>
        <translation>Model load progress</translation>
    </message>
    <message>
        <source>Reset</source>
        <translation>Reset</translation>
    </message>
    <message>
        <source>Reset the engine settings to the saved values</source>
        <translation>Reset the engine settings to the saved values</translation>
    </message>
    <message>
        <source>Apply and reload</source>
        <translation>Apply and reload</translation>
    </message>
    <message>
        <source>Apply the engine settings and reload the model</source>
        <translation>Apply the engine settings and reload the model</translation>
    </message>
    <message>
        <source>The KV cache size must be between 0 (automatic) and %1 MiB (half the memory); %2 MiB was given.</source>
        <translation>The KV cache size must be between 0 (automatic) and %1 MiB (half the memory); %2 MiB was given.</translation>
    </message>
    <message>
        <source>The number of concurrent sequences must be between 1 and %1; %2 was given.</source>
        <translation>The number of concurrent sequences must be between 1 and %1; %2 was given.</translation>
    </message>
    <message>
        <source>The block size must be between 1 and %1 tokens; %2 was given.</source>
        <translation>The block size must be between 1 and %1 tokens; %2 was given.</translation>
    </message>
    <message>
        <source>The number of CPU threads must be between 0 (all cores) and %1; %2 was given.</source>
        <translation>The number of CPU threads must be between 0 (all cores) and %1; %2 was given.</translation>
    </message>
    <message>
        <source>KV cache size (MiB) too small for this model: it cannot hold one full-length sequence.</source>
        <translation>KV cache size (MiB) too small for this model: it cannot hold one full-length sequence.</translation>
    </message>
    <message>
        <source>KV cache size (MiB) too small for this model: needs at least %1 MiB for one full-length sequence.</source>
        <translation>KV cache size (MiB) too small for this model: needs at least %1 MiB for one full-length sequence.</translation>
    </message>
    <message numerus="yes">
        <source>Applied: %n KV block(s).</source>
        <translation>
            <numerusform>Applied: %n KV block.</numerusform>
            <numerusform>Applied: %n KV blocks.</numerusform>
        </translation>
    </message>
    <message>
        <source>KV cache type</source>
        <translation>KV cache type</translation>
    </message>
    <message>
        <source>Automatic (bfloat16)</source>
        <translation>Automatic (bfloat16)</translation>
    </message>
    <message>
        <source>float32 (exact, 4 bytes per value)</source>
        <translation>float32 (exact, 4 bytes per value)</translation>
    </message>
    <message>
        <source>bfloat16 (2 bytes per value)</source>
        <translation>bfloat16 (2 bytes per value)</translation>
    </message>
    <message>
        <source>float16 (2 bytes per value)</source>
        <translation>float16 (2 bytes per value)</translation>
    </message>
    <message>
        <source>q8_0 (about 1 byte per value; head sizes of multiples of 32)</source>
        <translation>q8_0 (about 1 byte per value; head sizes of multiples of 32)</translation>
    </message>
    <message>
        <source>KV cache element type</source>
        <translation>KV cache element type</translation>
    </message>
    <message>
        <source>The KV cache type must be one of %1; &quot;%2&quot; was given.</source>
        <translation>The KV cache type must be one of %1; &quot;%2&quot; was given.</translation>
    </message>
    <message>
        <source>Context length (tokens, 0 = the model&apos;s)</source>
        <translation>Context length (tokens, 0 = the model&apos;s)</translation>
    </message>
    <message>
        <source>Context length in tokens</source>
        <translation>Context length in tokens</translation>
    </message>
    <message>
        <source>When a conversation outgrows the context</source>
        <translation>When a conversation outgrows the context</translation>
    </message>
    <message>
        <source>Drop the oldest turns</source>
        <translation>Drop the oldest turns</translation>
    </message>
    <message>
        <source>Keep the system prompt and first turn, drop the next</source>
        <translation>Keep the system prompt and first turn, drop the next</translation>
    </message>
    <message>
        <source>Stop: send nothing</source>
        <translation>Stop: send nothing</translation>
    </message>
    <message>
        <source>The context length must be 0 (the model&apos;s) or between 16 and %1 tokens; %2 was given.</source>
        <translation>The context length must be 0 (the model&apos;s) or between 16 and %1 tokens; %2 was given.</translation>
    </message>
    <message>
        <source>Draft model for speculative decoding (optional: a smaller model with the same vocabulary; panes choose it under Draft tokens)</source>
        <translation>Draft model for speculative decoding (optional: a smaller model with the same vocabulary; panes choose it under Draft tokens)</translation>
    </message>
    <message>
        <source>Path of a model file or folder</source>
        <translation>Path of a model file or folder</translation>
    </message>
    <message>
        <source>Draft model path</source>
        <translation>Draft model path</translation>
    </message>
    <message>
        <source>The draft model &quot;%1&quot; does not exist: give a model file or folder, or leave it empty.</source>
        <translation>The draft model &quot;%1&quot; does not exist: give a model file or folder, or leave it empty.</translation>
    </message>
</context>
<context>
    <name>EngineView</name>
    <message>
        <source>Engine view</source>
        <translation>Engine view</translation>
    </message>
    <message>
        <source>%1 running · %2 waiting · KV blocks: %3 used, %4 free, %5 cached, of %6 · %7 shared · prefix-cache hit rate %8</source>
        <translation>%1 running · %2 waiting · KV blocks: %3 used, %4 free, %5 cached, of %6 · %7 shared · prefix-cache hit rate %8</translation>
    </message>
    <message>
        <source>Pane %1</source>
        <translation>Pane %1</translation>
    </message>
    <message>
        <source>Other request</source>
        <translation>Other request</translation>
    </message>
    <message>
        <source>Shared prefix (ref count &gt; 1)</source>
        <translation>Shared prefix (ref count &gt; 1)</translation>
    </message>
    <message>
        <source>Free, kept in the prefix cache</source>
        <translation>Free, kept in the prefix cache</translation>
    </message>
    <message>
        <source>Free</source>
        <translation>Free</translation>
    </message>
    <message>
        <source>KV cache block map</source>
        <translation>KV cache block map</translation>
    </message>
    <message>
        <source>%1 of %2 blocks in use</source>
        <translation>%1 of %2 blocks in use</translation>
    </message>
    <message>
        <source>Block %1</source>
        <translation>Block %1</translation>
    </message>
    <message>
        <source>pane %1</source>
        <translation>pane %1</translation>
    </message>
    <message>
        <source>in use</source>
        <translation>in use</translation>
    </message>
    <message>
        <source>free</source>
        <translation>free</translation>
    </message>
    <message>
        <source>shared</source>
        <translation>shared</translation>
    </message>
    <message>
        <source>cached</source>
        <translation>cached</translation>
    </message>
    <message>
        <source>Running and waiting requests</source>
        <translation>Running and waiting requests</translation>
    </message>
    <message>
        <source>Requests</source>
        <translation>Requests</translation>
    </message>
    <message>
        <source>%1 · %2 · %3 · %4 prompt + %5 new tokens · %6 blocks</source>
        <translation>%1 · %2 · %3 · %4 prompt + %5 new tokens · %6 blocks</translation>
    </message>
    <message>
        <source>no pane</source>
        <translation>no pane</translation>
    </message>
    <message>
        <source>running</source>
        <translation>running</translation>
    </message>
    <message>
        <source>waiting</source>
        <translation>waiting</translation>
    </message>
    <message>
        <source>No requests</source>
        <translation>No requests</translation>
    </message>
    <message>
        <source>Tokens/s (peak %1)</source>
        <translation>Tokens/s (peak %1)</translation>
    </message>
    <message>
        <source>Tokens per second over time</source>
        <translation>Tokens per second over time</translation>
    </message>
    <message>
        <source>server</source>
        <translation>server</translation>
    </message>
    <message>
        <source>Recurrent state: %1 slots · %2 held by running requests · %3 prefix-cache checkpoints</source>
        <translation>Recurrent state: %1 slots · %2 held by running requests · %3 prefix-cache checkpoints</translation>
    </message>
    <message>
        <source>1 cell = %1 blocks: the share in use from the bottom, then the cached share</source>
        <translation>1 cell = %1 blocks: the share in use from the bottom, then the cached share</translation>
    </message>
</context>
<context>
    <name>EngineWorker</name>
    <message>
        <source>No model is loaded.</source>
        <translation>No model is loaded.</translation>
    </message>
    <message>
        <source>The message is %1 tokens long; the model&apos;s context holds %2.</source>
        <translation>The message is %1 tokens long; the model&apos;s context holds %2.</translation>
    </message>
    <message>
        <source>Engine error: %1</source>
        <translation>Engine error: %1</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1: %2</translation>
    </message>
    <message>
        <source>the conversation is %1 tokens long and the model&apos;s context holds %2 with room for the reply. Start a new chat, or let older turns go (Settings, Engine: when a conversation outgrows the context).</source>
        <translation>the conversation is %1 tokens long and the model&apos;s context holds %2 with room for the reply. Start a new chat, or let older turns go (Settings, Engine: when a conversation outgrows the context).</translation>
    </message>
    <message>
        <source>The image projector beside the model was not loaded, so it reads no images: %1</source>
        <translation>The image projector beside the model was not loaded, so it reads no images: %1</translation>
    </message>
    <message numerus="yes">
        <source>This model reads no images: the conversation&apos;s %n picture(s) were left out of what it read.</source>
        <translation>
            <numerusform>This model reads no images: the conversation&apos;s %n picture was left out of what it read.</numerusform>
            <numerusform>This model reads no images: the conversation&apos;s %n pictures were left out of what it read.</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>ErrorBanner</name>
    <message>
        <source>Dismiss error</source>
        <translation>Dismiss error</translation>
    </message>
    <message>
        <source>Hide details</source>
        <translation>Hide details</translation>
    </message>
    <message>
        <source>Details</source>
        <translation>Details</translation>
    </message>
    <message>
        <source>Retry</source>
        <translation>Retry</translation>
    </message>
    <message>
        <source>Retry saving the chat history</source>
        <translation>Retry saving the chat history</translation>
    </message>
    <message>
        <source>Error details</source>
        <translation>Error details</translation>
    </message>
</context>
<context>
    <name>ErrorWindow</name>
    <message>
        <source>PagedChat: cannot start</source>
        <translation>PagedChat: cannot start</translation>
    </message>
    <message>
        <source>Error details</source>
        <translation>Error details</translation>
    </message>
    <message>
        <source>Quit</source>
        <translation>Quit</translation>
    </message>
    <message>
        <source>Quit PagedChat</source>
        <translation>Quit PagedChat</translation>
    </message>
    <message>
        <source>Try again</source>
        <translation>Try again</translation>
    </message>
    <message>
        <source>Try to start PagedChat again</source>
        <translation>Try to start PagedChat again</translation>
    </message>
</context>
<context>
    <name>GeneratingChip</name>
    <message>
        <source>Generating</source>
        <translation>Generating</translation>
    </message>
    <message>
        <source>Reading %1 / %2 tokens</source>
        <translation>Reading %1 / %2 tokens</translation>
    </message>
    <message>
        <source>Tool calls</source>
        <translation>Tool calls</translation>
    </message>
</context>
<context>
    <name>HistoryController</name>
    <message>
        <source>New chat</source>
        <translation>New chat</translation>
    </message>
    <message>
        <source>Conversation</source>
        <translation>Conversation</translation>
    </message>
    <message>
        <source>Cannot write %1: %2</source>
        <translation>Cannot write %1: %2</translation>
    </message>
    <message>
        <source>%1 (file: %2)</source>
        <translation>%1 (file: %2)</translation>
    </message>
    <message>
        <source>No file name was given for the export.</source>
        <translation>No file name was given for the export.</translation>
    </message>
    <message>
        <source>Cannot write %1: the folder %2 does not exist.</source>
        <translation>Cannot write %1: the folder %2 does not exist.</translation>
    </message>
    <message>
        <source>Cannot write %1: it is a symbolic link (to %2); choose the file itself.</source>
        <translation>Cannot write %1: it is a symbolic link (to %2); choose the file itself.</translation>
    </message>
    <message>
        <source>it is not a regular file</source>
        <translation>it is not a regular file</translation>
    </message>
    <message>
        <source>the file is larger than %1 MB</source>
        <translation>the file is larger than %1 MB</translation>
    </message>
    <message>
        <source>Cannot import %1: %2</source>
        <translation>Cannot import %1: %2</translation>
    </message>
</context>
<context>
    <name>KeychainApiKeyStore</name>
    <message>
        <source>The system keychain is unavailable (%1).</source>
        <translation>The system keychain is unavailable (%1).</translation>
    </message>
</context>
<context>
    <name>LocalChatBackend</name>
    <message>
        <source>The model could not be loaded.</source>
        <translation>The model could not be loaded.</translation>
    </message>
    <message>
        <source>the model&apos;s own (%1 format)</source>
        <translation>the model&apos;s own (%1 format)</translation>
    </message>
    <message numerus="yes">
        <source>%1: %2 layers, dim %3, vocab %4, weights %5, %n KV block(s), chat template %6</source>
        <translation>
            <numerusform>%1: %2 layers, dim %3, vocab %4, weights %5, %n KV block, chat template %6</numerusform>
            <numerusform>%1: %2 layers, dim %3, vocab %4, weights %5, %n KV blocks, chat template %6</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>LocalModels</name>
    <message>
        <source>There is no pane %1.</source>
        <translation>There is no pane %1.</translation>
    </message>
    <message>
        <source>%1 does not fit in memory beside the models loaded: its weights take %2, and %3 is available (%4 kept for the system). Close the panes that use another model, or pick a smaller one.</source>
        <translation>%1 does not fit in memory beside the models loaded: its weights take %2, and %3 is available (%4 kept for the system). Close the panes that use another model, or pick a smaller one.</translation>
    </message>
    <message>
        <source>%1 is a %2 model, which PagedChat cannot run.</source>
        <translation>%1 is a %2 model, which PagedChat cannot run.</translation>
    </message>
    <message>
        <source>%1 cannot be opened as a model: %2</source>
        <translation>%1 cannot be opened as a model: %2</translation>
    </message>
</context>
<context>
    <name>Main</name>
    <message>
        <source>PagedChat</source>
        <translation>PagedChat</translation>
    </message>
    <message>
        <source>The model could not be loaded: %1</source>
        <translation>The model could not be loaded: %1</translation>
    </message>
    <message>
        <source>Scroll chat panes</source>
        <translation>Scroll chat panes</translation>
    </message>
    <message>
        <source>PagedChat engine view</source>
        <translation>PagedChat engine view</translation>
    </message>
</context>
<context>
    <name>MessageActions</name>
    <message>
        <source>Edit message</source>
        <translation>Edit message</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>Cancel</translation>
    </message>
    <message>
        <source>Cancel editing</source>
        <translation>Cancel editing</translation>
    </message>
    <message>
        <source>Save and send</source>
        <translation>Save and send</translation>
    </message>
    <message>
        <source>Save the edited message and send it</source>
        <translation>Save the edited message and send it</translation>
    </message>
    <message>
        <source>Previous version</source>
        <translation>Previous version</translation>
    </message>
    <message>
        <source>%1/%2</source>
        <extracomment>Which version of a message is shown: &quot;2/3&quot;</extracomment>
        <translation>%1/%2</translation>
    </message>
    <message>
        <source>Version %1 of %2</source>
        <translation>Version %1 of %2</translation>
    </message>
    <message>
        <source>Next version</source>
        <translation>Next version</translation>
    </message>
    <message>
        <source>Copy</source>
        <translation>Copy</translation>
    </message>
    <message>
        <source>Copy message</source>
        <translation>Copy message</translation>
    </message>
    <message>
        <source>Copied</source>
        <translation>Copied</translation>
    </message>
    <message>
        <source>Edit</source>
        <translation>Edit</translation>
    </message>
    <message>
        <source>Edit and resend message</source>
        <translation>Edit and resend message</translation>
    </message>
    <message>
        <source>Regenerate</source>
        <translation>Regenerate</translation>
    </message>
    <message>
        <source>Regenerate answer</source>
        <translation>Regenerate answer</translation>
    </message>
    <message>
        <source>Continue</source>
        <translation>Continue</translation>
    </message>
    <message>
        <source>Continue the cut-off answer</source>
        <translation>Continue the cut-off answer</translation>
    </message>
</context>
<context>
    <name>MessageBubble</name>
    <message>
        <source>interrupted</source>
        <translation>interrupted</translation>
    </message>
    <message>
        <source>stopped</source>
        <translation>stopped</translation>
    </message>
    <message>
        <source>length limit reached</source>
        <translation>length limit reached</translation>
    </message>
    <message>
        <source>(no reply — interrupted)</source>
        <translation>(no reply — interrupted)</translation>
    </message>
    <message>
        <source>(no reply — stopped)</source>
        <translation>(no reply — stopped)</translation>
    </message>
    <message>
        <source>(no reply)</source>
        <translation>(no reply)</translation>
    </message>
    <message>
        <source>You: %1</source>
        <translation>You: %1</translation>
    </message>
    <message>
        <source>Model: %1</source>
        <translation>Model: %1</translation>
    </message>
    <message>
        <source>System prompt</source>
        <translation>System prompt</translation>
    </message>
    <message>
        <source>System prompt: %1</source>
        <translation>System prompt: %1</translation>
    </message>
    <message>
        <source>(no reply — length limit reached)</source>
        <translation>(no reply — length limit reached)</translation>
    </message>
    <message>
        <source>not sent: outside the model&apos;s context</source>
        <translation>not sent: outside the model&apos;s context</translation>
    </message>
    <message>
        <source>Tool result: %1</source>
        <translation>Tool result: %1</translation>
    </message>
    <message>
        <source>Tool result</source>
        <translation>Tool result</translation>
    </message>
    <message>
        <source>Show less</source>
        <translation>Show less</translation>
    </message>
    <message>
        <source>Show all</source>
        <translation>Show all</translation>
    </message>
    <message>
        <source>Tool call: %1</source>
        <translation>Tool call: %1</translation>
    </message>
    <message>
        <source>Arguments: %1</source>
        <translation>Arguments: %1</translation>
    </message>
    <message>
        <source>Allow once</source>
        <translation>Allow once</translation>
    </message>
    <message>
        <source>Allow this call of %1 once</source>
        <translation>Allow this call of %1 once</translation>
    </message>
    <message>
        <source>Always allow</source>
        <translation>Always allow</translation>
    </message>
    <message>
        <source>Always allow %1</source>
        <translation>Always allow %1</translation>
    </message>
    <message>
        <source>Deny</source>
        <translation>Deny</translation>
    </message>
    <message>
        <source>Deny this call of %1</source>
        <translation>Deny this call of %1</translation>
    </message>
    <message>
        <source>Running…</source>
        <translation>Running…</translation>
    </message>
    <message>
        <source>Done</source>
        <translation>Done</translation>
    </message>
    <message>
        <source>Image, %1 by %2 pixels</source>
        <translation>Image, %1 by %2 pixels</translation>
    </message>
</context>
<context>
    <name>MessageContent</name>
    <message>
        <source>code</source>
        <translation>code</translation>
    </message>
    <message>
        <source>Copied</source>
        <translation>Copied</translation>
    </message>
    <message>
        <source>Copy</source>
        <translation>Copy</translation>
    </message>
    <message>
        <source>Copy the %1 code</source>
        <translation>Copy the %1 code</translation>
    </message>
    <message>
        <source>Copy the code</source>
        <translation>Copy the code</translation>
    </message>
    <message>
        <source>Scroll the code sideways</source>
        <translation>Scroll the code sideways</translation>
    </message>
    <message>
        <source>Code: %1</source>
        <translation>Code: %1</translation>
    </message>
</context>
<context>
    <name>MessageList</name>
    <message>
        <source>Messages in pane %1</source>
        <translation>Messages in pane %1</translation>
    </message>
    <message>
        <source>Scroll messages</source>
        <translation>Scroll messages</translation>
    </message>
    <message>
        <source>Type the beginning of a text below and press Enter: this model has no chat format and continues what you write.</source>
        <translation>Type the beginning of a text below and press Enter: this model has no chat format and continues what you write.</translation>
    </message>
    <message>
        <source>Type a message below and press Enter.</source>
        <translation>Type a message below and press Enter.</translation>
    </message>
</context>
<context>
    <name>ModelController</name>
    <message>
        <source>The engine settings were not applied: %1 The previous settings were restored.</source>
        <translation>The engine settings were not applied: %1 The previous settings were restored.</translation>
    </message>
    <message>
        <source>The saved KV cache size (%1 MiB) was too small for this model; it was set back to automatic. %2</source>
        <translation>The saved KV cache size (%1 MiB) was too small for this model; it was set back to automatic. %2</translation>
    </message>
    <message>
        <source>%1 The model loaded before (%2) was loaded again.</source>
        <translation>%1 The model loaded before (%2) was loaded again.</translation>
    </message>
    <message>
        <source>The model&apos;s chat template cannot be used as it is: %1</source>
        <translation>The model&apos;s chat template cannot be used as it is: %1</translation>
    </message>
    <message>
        <source>Warning from the engine: %1</source>
        <translation>Warning from the engine: %1</translation>
    </message>
</context>
<context>
    <name>ModelPicker</name>
    <message>
        <source>Model</source>
        <translation>Model</translation>
    </message>
    <message>
        <source>Open a model file</source>
        <translation>Open a model file</translation>
    </message>
    <message>
        <source>All files (*)</source>
        <translation>All files (*)</translation>
    </message>
    <message>
        <source>Open a model folder</source>
        <translation>Open a model folder</translation>
    </message>
    <message>
        <source>Loading %1…</source>
        <translation>Loading %1…</translation>
    </message>
    <message>
        <source>Loaded: %1</source>
        <translation>Loaded: %1</translation>
    </message>
    <message>
        <source>Not loaded: %1</source>
        <translation>Not loaded: %1</translation>
    </message>
    <message>
        <source>No model is loaded.</source>
        <translation>No model is loaded.</translation>
    </message>
    <message>
        <source>Model load progress</source>
        <translation>Model load progress</translation>
    </message>
    <message>
        <source>Open file…</source>
        <translation>Open file…</translation>
    </message>
    <message>
        <source>Open folder…</source>
        <translation>Open folder…</translation>
    </message>
    <message>
        <source>Unload</source>
        <translation>Unload</translation>
    </message>
    <message>
        <source>Unload the model</source>
        <translation>Unload the model</translation>
    </message>
    <message>
        <source>Stop every reply and free the model&apos;s memory</source>
        <translation>Stop every reply and free the model&apos;s memory</translation>
    </message>
    <message>
        <source>Recent models</source>
        <translation>Recent models</translation>
    </message>
    <message>
        <source>Remove missing</source>
        <translation>Remove missing</translation>
    </message>
    <message>
        <source>Remove missing models from the list</source>
        <translation>Remove missing models from the list</translation>
    </message>
    <message>
        <source>Load %1</source>
        <translation>Load %1</translation>
    </message>
    <message>
        <source>%1 (missing)</source>
        <translation>%1 (missing)</translation>
    </message>
    <message>
        <source>%1 — missing</source>
        <translation>%1 — missing</translation>
    </message>
    <message>
        <source>Remove %1 from the list</source>
        <translation>Remove %1 from the list</translation>
    </message>
    <message>
        <source>No recent models yet.</source>
        <translation>No recent models yet.</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>Close</translation>
    </message>
    <message>
        <source>Close the model picker</source>
        <translation>Close the model picker</translation>
    </message>
    <message>
        <source>Download…</source>
        <translation>Download…</translation>
    </message>
    <message>
        <source>Download a model from Hugging Face</source>
        <translation>Download a model from Hugging Face</translation>
    </message>
    <message>
        <source>Model files (*.gguf *.bin config.json *.safetensors)</source>
        <translation>Model files (*.gguf *.bin config.json *.safetensors)</translation>
    </message>
</context>
<context>
    <name>OpenLinkDialog</name>
    <message>
        <source>Open this link?</source>
        <translation>Open this link?</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>Cancel</translation>
    </message>
    <message>
        <source>Do not open the link</source>
        <translation>Do not open the link</translation>
    </message>
    <message>
        <source>Open</source>
        <translation>Open</translation>
    </message>
    <message>
        <source>Open the link</source>
        <translation>Open the link</translation>
    </message>
    <message>
        <source>The link is in a message written by a model or a server. It opens in your browser or mail program and leads to:</source>
        <translation>The link is in a message written by a model or a server. It opens in your browser or mail program and leads to:</translation>
    </message>
</context>
<context>
    <name>PaneBackendSection</name>
    <message>
        <source>Answered by</source>
        <translation>Answered by</translation>
    </message>
    <message>
        <source>The model loaded in PagedChat</source>
        <translation>The model loaded in PagedChat</translation>
    </message>
    <message>
        <source>Server base URL</source>
        <translation>Server base URL</translation>
    </message>
    <message>
        <source>Stored in the system keychain (type to replace)</source>
        <translation>Stored in the system keychain (type to replace)</translation>
    </message>
    <message>
        <source>API key (optional)</source>
        <translation>API key (optional)</translation>
    </message>
    <message>
        <source>API key</source>
        <translation>API key</translation>
    </message>
    <message>
        <source>Forget</source>
        <translation>Forget</translation>
    </message>
    <message>
        <source>Forget the stored API key</source>
        <translation>Forget the stored API key</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>Model</translation>
    </message>
    <message>
        <source>List models</source>
        <translation>List models</translation>
    </message>
    <message>
        <source>Ask the server for its models</source>
        <translation>Ask the server for its models</translation>
    </message>
    <message>
        <source>An OpenAI-compatible server</source>
        <translation>An OpenAI-compatible server</translation>
    </message>
    <message>
        <source>vLLM, llama-server, Ollama, another PagedChat: its base URL, the part before /chat/completions</source>
        <translation>vLLM, llama-server, Ollama, another PagedChat: its base URL, the part before /chat/completions</translation>
    </message>
    <message>
        <source>Choose a model file or folder.</source>
        <translation>Choose a model file or folder.</translation>
    </message>
    <message>
        <source>Another model on this computer</source>
        <translation>Another model on this computer</translation>
    </message>
    <message>
        <source>Loaded beside the main model while memory allows, with its own batch and KV cache; freed when no pane uses it.</source>
        <translation>Loaded beside the main model while memory allows, with its own batch and KV cache; freed when no pane uses it.</translation>
    </message>
    <message>
        <source>Model file or folder</source>
        <translation>Model file or folder</translation>
    </message>
    <message>
        <source> (loaded)</source>
        <translation> (loaded)</translation>
    </message>
    <message>
        <source>Browse…</source>
        <translation>Browse…</translation>
    </message>
    <message>
        <source>Choose a model file</source>
        <translation>Choose a model file</translation>
    </message>
    <message>
        <source>Choose a model for this pane</source>
        <translation>Choose a model for this pane</translation>
    </message>
    <message>
        <source>Model files (*.gguf *.bin config.json *.safetensors)</source>
        <translation>Model files (*.gguf *.bin config.json *.safetensors)</translation>
    </message>
    <message>
        <source>All files (*)</source>
        <translation>All files (*)</translation>
    </message>
</context>
<context>
    <name>PaneEndpoints</name>
    <message>
        <source>There is no pane %1.</source>
        <translation>There is no pane %1.</translation>
    </message>
    <message>
        <source>Choose a model: press List models and pick one of the server&apos;s models.</source>
        <translation>Choose a model: press List models and pick one of the server&apos;s models.</translation>
    </message>
    <message>
        <source>%1 The API key is used until PagedChat quits, but not saved.</source>
        <translation>%1 The API key is used until PagedChat quits, but not saved.</translation>
    </message>
    <message>
        <source>%1 Type the API key in the pane&apos;s settings again.</source>
        <translation>%1 Type the API key in the pane&apos;s settings again.</translation>
    </message>
    <message>
        <source>This URL is plain http: the API key and the conversation travel unencrypted to %1, readable by anyone on the way. Use https:// unless the network is yours.</source>
        <translation>This URL is plain http: the API key and the conversation travel unencrypted to %1, readable by anyone on the way. Use https:// unless the network is yours.</translation>
    </message>
</context>
<context>
    <name>PaneHeader</name>
    <message>
        <source>Pane %1 conversation: %2</source>
        <translation>Pane %1 conversation: %2</translation>
    </message>
    <message>
        <source>Close pane %1</source>
        <translation>Close pane %1</translation>
    </message>
    <message>
        <source>%1 tok/s</source>
        <translation>%1 tok/s</translation>
    </message>
    <message>
        <source>Answer %1</source>
        <translation>Answer %1</translation>
    </message>
    <message>
        <source>Blind compare</source>
        <translation>Blind compare</translation>
    </message>
    <message>
        <source>Settings of pane %1</source>
        <translation>Settings of pane %1</translation>
    </message>
    <message>
        <source>Hidden until you vote</source>
        <translation>Hidden until you vote</translation>
    </message>
    <message>
        <source>Settings</source>
        <translation>Settings</translation>
    </message>
    <message>
        <source>Close this pane (Ctrl+W)</source>
        <translation>Close this pane (Ctrl+W)</translation>
    </message>
    <message>
        <source>Speed: %1</source>
        <translation>Speed: %1</translation>
    </message>
    <message>
        <source>Context %1 / %2 (%3%)</source>
        <translation>Context %1 / %2 (%3%)</translation>
    </message>
    <message>
        <source>Context almost full: %1</source>
        <translation>Context almost full: %1</translation>
    </message>
    <message>
        <source>Context use: %1</source>
        <translation>Context use: %1</translation>
    </message>
    <message>
        <source>Context use of pane %1</source>
        <translation>Context use of pane %1</translation>
    </message>
    <message>
        <source>Context — / %1</source>
        <translation>Context — / %1</translation>
    </message>
    <message>
        <source>⇄ %1 at %2</source>
        <translation>⇄ %1 at %2</translation>
    </message>
    <message>
        <source>Answered by the server %1</source>
        <translation>Answered by the server %1</translation>
    </message>
    <message>
        <source>▣ %1</source>
        <translation>▣ %1</translation>
    </message>
    <message>
        <source>Answered by the model %1</source>
        <translation>Answered by the model %1</translation>
    </message>
    <message>
        <source>drafts %1% · ×%2</source>
        <translation>drafts %1% · ×%2</translation>
    </message>
    <message>
        <source>Speculative decoding: the share of proposed draft tokens the model accepted, and the tokens one step gave on average</source>
        <translation>Speculative decoding: the share of proposed draft tokens the model accepted, and the tokens one step gave on average</translation>
    </message>
    <message>
        <source>Speculative decoding: %1</source>
        <translation>Speculative decoding: %1</translation>
    </message>
    <message>
        <source>MTP drafts %1% · ×%2</source>
        <translation>MTP drafts %1% · ×%2</translation>
    </message>
</context>
<context>
    <name>PaneSettings</name>
    <message>
        <source>temperature %1 · top-p %2 · top-k %3 · min-p %4 · repetition %5 · max %6 tokens · seed %7</source>
        <translation>temperature %1 · top-p %2 · top-k %3 · min-p %4 · repetition %5 · max %6 tokens · seed %7</translation>
    </message>
    <message>
        <source>off</source>
        <translation>off</translation>
    </message>
    <message>
        <source>random</source>
        <translation>random</translation>
    </message>
    <message>
        <source>%1 must be a number.</source>
        <translation>%1 must be a number.</translation>
    </message>
    <message>
        <source>%1 must be between %2 and %3.</source>
        <translation>%1 must be between %2 and %3.</translation>
    </message>
    <message>
        <source>Temperature</source>
        <translation>Temperature</translation>
    </message>
    <message>
        <source>Top-p</source>
        <translation>Top-p</translation>
    </message>
    <message>
        <source>Min-p</source>
        <translation>Min-p</translation>
    </message>
    <message>
        <source>Repetition penalty</source>
        <translation>Repetition penalty</translation>
    </message>
    <message>
        <source>Top-k must be a whole number from 0 (off) to %1.</source>
        <translation>Top-k must be a whole number from 0 (off) to %1.</translation>
    </message>
    <message>
        <source>Max tokens must be a whole number from 1 to %1.</source>
        <translation>Max tokens must be a whole number from 1 to %1.</translation>
    </message>
    <message>
        <source>Seed must be &quot;random&quot; or a whole number of 0 or more.</source>
        <translation>Seed must be &quot;random&quot; or a whole number of 0 or more.</translation>
    </message>
    <message>
        <source> · reasoning %1</source>
        <translation> · reasoning %1</translation>
    </message>
    <message>
        <source>on</source>
        <translation>on</translation>
    </message>
    <message>
        <source>low</source>
        <translation>low</translation>
    </message>
    <message>
        <source>medium</source>
        <translation>medium</translation>
    </message>
    <message>
        <source>high</source>
        <translation>high</translation>
    </message>
    <message>
        <source>the model&apos;s default</source>
        <translation>the model&apos;s default</translation>
    </message>
    <message>
        <source>Reasoning must be on, off, low, medium, high or empty.</source>
        <translation>Reasoning must be on, off, low, medium, high or empty.</translation>
    </message>
    <message>
        <source>Tools must be on or off.</source>
        <translation>Tools must be on or off.</translation>
    </message>
    <message>
        <source>Speculative decoding must be on or off.</source>
        <translation>Speculative decoding must be on or off.</translation>
    </message>
    <message>
        <source>Draft tokens must be auto, mtp, draft, ngram or off.</source>
        <translation>Draft tokens must be auto, mtp, draft, ngram or off.</translation>
    </message>
    <message>
        <source>Tinting draft text must be on or off.</source>
        <translation>Tinting draft text must be on or off.</translation>
    </message>
</context>
<context>
    <name>PaneSettingsPopup</name>
    <message>
        <source>Settings of pane %1</source>
        <translation>Settings of pane %1</translation>
    </message>
    <message>
        <source>Pane settings</source>
        <translation>Pane settings</translation>
    </message>
    <message>
        <source>System prompt</source>
        <translation>System prompt</translation>
    </message>
    <message>
        <source>Instructions put before every conversation in this pane</source>
        <translation>Instructions put before every conversation in this pane</translation>
    </message>
    <message>
        <source>Temperature (0–2)</source>
        <translation>Temperature (0–2)</translation>
    </message>
    <message>
        <source>Top-p (0.01–1)</source>
        <translation>Top-p (0.01–1)</translation>
    </message>
    <message>
        <source>Top-k (0 = off)</source>
        <translation>Top-k (0 = off)</translation>
    </message>
    <message>
        <source>Min-p (0–1)</source>
        <translation>Min-p (0–1)</translation>
    </message>
    <message>
        <source>Repetition penalty (0.5–2)</source>
        <translation>Repetition penalty (0.5–2)</translation>
    </message>
    <message>
        <source>Max tokens</source>
        <translation>Max tokens</translation>
    </message>
    <message>
        <source>Seed (&quot;random&quot; or a number)</source>
        <translation>Seed (&quot;random&quot; or a number)</translation>
    </message>
    <message>
        <source>Defaults</source>
        <translation>Defaults</translation>
    </message>
    <message>
        <source>Reset the sampling settings to the defaults</source>
        <translation>Reset the sampling settings to the defaults</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>Cancel</translation>
    </message>
    <message>
        <source>Close without changes</source>
        <translation>Close without changes</translation>
    </message>
    <message>
        <source>Apply</source>
        <translation>Apply</translation>
    </message>
    <message>
        <source>Apply the settings</source>
        <translation>Apply the settings</translation>
    </message>
    <message>
        <source>Reasoning</source>
        <translation>Reasoning</translation>
    </message>
    <message>
        <source>Reasoning: thinking on or off, or its effort</source>
        <translation>Reasoning: thinking on or off, or its effort</translation>
    </message>
    <message numerus="yes">
        <source>Offer the tools of Settings → Tools (%n tool(s))</source>
        <translation>
            <numerusform>Offer the tools of Settings → Tools (%n tool)</numerusform>
            <numerusform>Offer the tools of Settings → Tools (%n tools)</numerusform>
        </translation>
    </message>
    <message>
        <source>Offer tools (none set up: Settings → Tools)</source>
        <translation>Offer tools (none set up: Settings → Tools)</translation>
    </message>
    <message>
        <source>Offer the tools of the server %1</source>
        <translation>Offer the tools of the server %1</translation>
    </message>
    <message>
        <source>Draft tokens</source>
        <translation>Draft tokens</translation>
    </message>
    <message>
        <source>Automatic</source>
        <translation>Automatic</translation>
    </message>
    <message>
        <source>Model&apos;s MTP layers</source>
        <translation>Model&apos;s MTP layers</translation>
    </message>
    <message>
        <source>N-gram lookup</source>
        <translation>N-gram lookup</translation>
    </message>
    <message>
        <source>Off</source>
        <translation>Off</translation>
    </message>
    <message>
        <source>Draft tokens: who proposes them</source>
        <translation>Draft tokens: who proposes them</translation>
    </message>
    <message>
        <source>Draft model (Settings → Engine)</source>
        <translation>Draft model (Settings → Engine)</translation>
    </message>
    <message>
        <source>Speculative decoding: draft tokens checked by the model in one step, so the same reply comes in fewer steps. The model&apos;s MTP layers (Qwen3.5/3.6 files that have them) guess from its own state; a draft model is a smaller model of the same vocabulary (set in Settings → Engine); n-gram lookup repeats earlier text of the conversation. Automatic takes MTP where the model has it.</source>
        <translation>Speculative decoding: draft tokens checked by the model in one step, so the same reply comes in fewer steps. The model&apos;s MTP layers (Qwen3.5/3.6 files that have them) guess from its own state; a draft model is a smaller model of the same vocabulary (set in Settings → Engine); n-gram lookup repeats earlier text of the conversation. Automatic takes MTP where the model has it.</translation>
    </message>
    <message>
        <source>Tint the accepted draft text</source>
        <translation>Tint the accepted draft text</translation>
    </message>
    <message>
        <source>Replies show the words that came from accepted draft tokens in another colour, while they stream and until the conversation is opened again.</source>
        <translation>Replies show the words that came from accepted draft tokens in another colour, while they stream and until the conversation is opened again.</translation>
    </message>
    <message>
        <source>Tool calls</source>
        <translation>Tool calls</translation>
    </message>
    <message>
        <source>The model decides</source>
        <translation>The model decides</translation>
    </message>
    <message>
        <source>Must call a tool</source>
        <translation>Must call a tool</translation>
    </message>
    <message>
        <source>Must call %1</source>
        <translation>Must call %1</translation>
    </message>
    <message>
        <source>Tool calls: whether the model must call a tool</source>
        <translation>Tool calls: whether the model must call a tool</translation>
    </message>
    <message>
        <source>In its reply to each message the model calls a tool when it decides to, or must call one: its reply is then held to the tools&apos; parameters. Its replies to the tools&apos; results are its own.</source>
        <translation>In its reply to each message the model calls a tool when it decides to, or must call one: its reply is then held to the tools&apos; parameters. Its replies to the tools&apos; results are its own.</translation>
    </message>
    <message>
        <source>This model has no MTP layers: n-gram lookup proposes its drafts instead.</source>
        <translation>This model has no MTP layers: n-gram lookup proposes its drafts instead.</translation>
    </message>
    <message>
        <source>No draft model is loaded (Settings → Engine): n-gram lookup proposes the drafts instead.</source>
        <translation>No draft model is loaded (Settings → Engine): n-gram lookup proposes the drafts instead.</translation>
    </message>
</context>
<context>
    <name>PaneState</name>
    <message>
        <source>New chat</source>
        <translation>New chat</translation>
    </message>
    <message>
        <source>No model is loaded: %1</source>
        <translation>No model is loaded: %1</translation>
    </message>
    <message>
        <source>Not sent: %1 Your text is back in the input box.</source>
        <translation>Not sent: %1 Your text is back in the input box.</translation>
    </message>
    <message>
        <source>Not continued: %1</source>
        <translation>Not continued: %1</translation>
    </message>
    <message>
        <source>Not sent: %1</source>
        <translation>Not sent: %1</translation>
    </message>
    <message>
        <source>No model is loaded. Open one with the Model button in the tool bar (Ctrl+O) to chat.</source>
        <translation>No model is loaded. Open one with the Model button in the tool bar (Ctrl+O) to chat.</translation>
    </message>
    <message>
        <source>Not sent: %1 Your text is still in the input box.</source>
        <translation>Not sent: %1 Your text is still in the input box.</translation>
    </message>
    <message>
        <source>No new answer: %1</source>
        <translation>No new answer: %1</translation>
    </message>
    <message>
        <source>The tool calls were not run: %1</source>
        <translation>The tool calls were not run: %1</translation>
    </message>
    <message>
        <source>Stopped: the model asked for more than %1 tool calls for one message (Settings → Tools sets the limit).</source>
        <translation>Stopped: the model asked for more than %1 tool calls for one message (Settings → Tools sets the limit).</translation>
    </message>
    <message>
        <source>The tool results were not saved: %1</source>
        <translation>The tool results were not saved: %1</translation>
    </message>
    <message>
        <source>The image %1 cannot be opened: %2</source>
        <translation>The image %1 cannot be opened: %2</translation>
    </message>
    <message>
        <source>The image %1 is larger than 64 MiB.</source>
        <translation>The image %1 is larger than 64 MiB.</translation>
    </message>
    <message>
        <source>This model cannot read images: open it with its image projector (an mmproj file in the model&apos;s folder).</source>
        <translation>This model cannot read images: open it with its image projector (an mmproj file in the model&apos;s folder).</translation>
    </message>
    <message numerus="yes">
        <source>At most %n images go with one message.</source>
        <translation>
            <numerusform>At most %n image goes with one message.</numerusform>
            <numerusform>At most %n images go with one message.</numerusform>
        </translation>
    </message>
    <message>
        <source>The image cannot be used: %1</source>
        <translation>The image cannot be used: %1</translation>
    </message>
    <message>
        <source>This model cannot read images. Remove them, or open the model with its image projector (an mmproj file in the model&apos;s folder).</source>
        <translation>This model cannot read images. Remove them, or open the model with its image projector (an mmproj file in the model&apos;s folder).</translation>
    </message>
    <message>
        <source>Image</source>
        <translation>Image</translation>
    </message>
    <message>
        <source>The image %1 cannot be used: %2</source>
        <translation>The image %1 cannot be used: %2</translation>
    </message>
</context>
<context>
    <name>ReasoningSection</name>
    <message numerus="yes">
        <source>Thinking… (%n character(s))</source>
        <translation>
            <numerusform>Thinking… (%n character)</numerusform>
            <numerusform>Thinking… (%n characters)</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Reasoning (%n character(s))</source>
        <translation>
            <numerusform>Reasoning (%n character)</numerusform>
            <numerusform>Reasoning (%n characters)</numerusform>
        </translation>
    </message>
    <message>
        <source>Hide the reasoning: %1</source>
        <translation>Hide the reasoning: %1</translation>
    </message>
    <message>
        <source>Show the reasoning: %1</source>
        <translation>Show the reasoning: %1</translation>
    </message>
    <message>
        <source>Copy</source>
        <translation>Copy</translation>
    </message>
    <message>
        <source>Copy the reasoning</source>
        <translation>Copy the reasoning</translation>
    </message>
    <message>
        <source>Copied</source>
        <translation>Copied</translation>
    </message>
</context>
<context>
    <name>RecentModelsModel</name>
    <message>
        <source>random weights: %1</source>
        <translation>random weights: %1</translation>
    </message>
    <message>
        <source>cannot be read: %1</source>
        <translation>cannot be read: %1</translation>
    </message>
    <message>
        <source>not supported: %1</source>
        <translation>not supported: %1</translation>
    </message>
    <message>
        <source>%1 B parameters</source>
        <translation>%1 B parameters</translation>
    </message>
    <message>
        <source>%1 M parameters</source>
        <translation>%1 M parameters</translation>
    </message>
    <message>
        <source>%1 K parameters</source>
        <translation>%1 K parameters</translation>
    </message>
    <message>
        <source>context %1</source>
        <translation>context %1</translation>
    </message>
    <message>
        <source>no chat template</source>
        <translation>no chat template</translation>
    </message>
    <message>
        <source>its own chat template</source>
        <translation>its own chat template</translation>
    </message>
    <message>
        <source>chat template %1</source>
        <translation>chat template %1</translation>
    </message>
</context>
<context>
    <name>RemoteChatBackend</name>
    <message>
        <source>Enter the endpoint&apos;s base URL, e.g. http://localhost:8000/v1.</source>
        <translation>Enter the endpoint&apos;s base URL, e.g. http://localhost:8000/v1.</translation>
    </message>
    <message>
        <source>&apos;%1&apos; is not an http:// or https:// URL.</source>
        <translation>&apos;%1&apos; is not an http:// or https:// URL.</translation>
    </message>
    <message>
        <source>&apos;%1&apos; names no host.</source>
        <translation>&apos;%1&apos; names no host.</translation>
    </message>
    <message>
        <source>No endpoint URL is set for this pane.</source>
        <translation>No endpoint URL is set for this pane.</translation>
    </message>
    <message>
        <source>it sent an event that is not JSON</source>
        <translation>it sent an event that is not JSON</translation>
    </message>
    <message>
        <source>%1 stopped the answer: %2</source>
        <translation>%1 stopped the answer: %2</translation>
    </message>
    <message>
        <source>%1 stopped the answer before it was complete (it aborted the request; is it shutting down?).</source>
        <translation>%1 stopped the answer before it was complete (it aborted the request; is it shutting down?).</translation>
    </message>
    <message>
        <source>%1 answered HTTP %2 %3.</source>
        <translation>%1 answered HTTP %2 %3.</translation>
    </message>
    <message>
        <source>The connection to %1 ended before the answer was complete.</source>
        <translation>The connection to %1 ended before the answer was complete.</translation>
    </message>
    <message>
        <source>%1 refused the request (HTTP %2 %3): %4 Check the API key in the pane&apos;s settings.</source>
        <translation>%1 refused the request (HTTP %2 %3): %4 Check the API key in the pane&apos;s settings.</translation>
    </message>
    <message>
        <source>%1 answered HTTP %2 %3: %4</source>
        <translation>%1 answered HTTP %2 %3: %4</translation>
    </message>
    <message>
        <source>Cannot reach %1: the connection was refused (is the server running on that port?).</source>
        <translation>Cannot reach %1: the connection was refused (is the server running on that port?).</translation>
    </message>
    <message>
        <source>Cannot reach %1: the host name is unknown.</source>
        <translation>Cannot reach %1: the host name is unknown.</translation>
    </message>
    <message>
        <source>%1 sent nothing for %2 s; the request was stopped.</source>
        <translation>%1 sent nothing for %2 s; the request was stopped.</translation>
    </message>
    <message>
        <source>TLS error with %1: %2</source>
        <translation>TLS error with %1: %2</translation>
    </message>
    <message>
        <source>%1 closed the connection before the answer was complete.</source>
        <translation>%1 closed the connection before the answer was complete.</translation>
    </message>
    <message>
        <source>Network error with %1: %2</source>
        <translation>Network error with %1: %2</translation>
    </message>
    <message>
        <source>%1 did not answer with an OpenAI model list.</source>
        <translation>%1 did not answer with an OpenAI model list.</translation>
    </message>
    <message>
        <source>%1 redirected the request to another server (%2); PagedChat did not follow it, so that your API key and messages stay with %1. Set the pane&apos;s URL to the server that answers.</source>
        <translation>%1 redirected the request to another server (%2); PagedChat did not follow it, so that your API key and messages stay with %1. Set the pane&apos;s URL to the server that answers.</translation>
    </message>
    <message>
        <source>another address</source>
        <translation>another address</translation>
    </message>
</context>
<context>
    <name>SearchPanel</name>
    <message>
        <source>Search all chats</source>
        <translation>Search all chats</translation>
    </message>
    <message>
        <source>Search text</source>
        <translation>Search text</translation>
    </message>
    <message>
        <source>Close search</source>
        <translation>Close search</translation>
    </message>
    <message>
        <source>Search results</source>
        <translation>Search results</translation>
    </message>
    <message>
        <source>Result in %1</source>
        <translation>Result in %1</translation>
    </message>
    <message>
        <source>No messages found.</source>
        <translation>No messages found.</translation>
    </message>
</context>
<context>
    <name>ServerPage</name>
    <message>
        <source>Server</source>
        <translation>Server</translation>
    </message>
    <message>
        <source>Serve the loaded model over the OpenAI API</source>
        <translation>Serve the loaded model over the OpenAI API</translation>
    </message>
    <message>
        <source>Serving at %1 — requests share the engine&apos;s batch with the panes.</source>
        <translation>Serving at %1 — requests share the engine&apos;s batch with the panes.</translation>
    </message>
    <message>
        <source>Starts once a model is loaded.</source>
        <translation>Starts once a model is loaded.</translation>
    </message>
    <message>
        <source>Off</source>
        <translation>Off</translation>
    </message>
    <message>
        <source>Address</source>
        <translation>Address</translation>
    </message>
    <message>
        <source>Address to listen on</source>
        <translation>Address to listen on</translation>
    </message>
    <message>
        <source>Port</source>
        <translation>Port</translation>
    </message>
    <message>
        <source>Port (0 = any free port)</source>
        <translation>Port (0 = any free port)</translation>
    </message>
    <message>
        <source>API key</source>
        <translation>API key</translation>
    </message>
    <message>
        <source>Server API key</source>
        <translation>Server API key</translation>
    </message>
    <message>
        <source>Restart with these settings</source>
        <translation>Restart with these settings</translation>
    </message>
    <message>
        <source>Start</source>
        <translation>Start</translation>
    </message>
    <message>
        <source>Allowed web pages</source>
        <translation>Allowed web pages</translation>
    </message>
    <message>
        <source>Web pages allowed to call the server from a browser (origins, comma-separated)</source>
        <translation>Web pages allowed to call the server from a browser (origins, comma-separated)</translation>
    </message>
    <message>
        <source>Optional on this machine</source>
        <translation>Optional on this machine</translation>
    </message>
    <message>
        <source>None (e.g. http://localhost:3000)</source>
        <translation>None (e.g. http://localhost:3000)</translation>
    </message>
    <message>
        <source>Allow other machines</source>
        <translation>Allow other machines</translation>
    </message>
    <message>
        <source>Other machines need an address other than 127.0.0.1 and an API key, which clients send as a Bearer token. Browsers are refused unless their page is listed above.</source>
        <translation>Other machines need an address other than 127.0.0.1 and an API key, which clients send as a Bearer token. Browsers are refused unless their page is listed above.</translation>
    </message>
</context>
<context>
    <name>SettingsDialog</name>
    <message>
        <source>Settings</source>
        <translation>Settings</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>Close</translation>
    </message>
    <message>
        <source>Close the settings</source>
        <translation>Close the settings</translation>
    </message>
    <message>
        <source>Settings pages</source>
        <translation>Settings pages</translation>
    </message>
    <message>
        <source>Engine</source>
        <translation>Engine</translation>
    </message>
</context>
<context>
    <name>StatusLine</name>
    <message>
        <source>Loading %1…</source>
        <translation>Loading %1…</translation>
    </message>
    <message>
        <source>No model loaded</source>
        <translation>No model loaded</translation>
    </message>
    <message numerus="yes">
        <source>%n running</source>
        <translation>
            <numerusform>%n running</numerusform>
            <numerusform>%n running</numerusform>
        </translation>
    </message>
    <message>
        <source>idle</source>
        <translation>idle</translation>
    </message>
    <message>
        <source>Model: %1  ·  %2 tok/s  ·  %3</source>
        <translation>Model: %1  ·  %2 tok/s  ·  %3</translation>
    </message>
    <message>
        <source>Engine status</source>
        <translation>Engine status</translation>
    </message>
    <message>
        <source>Model details</source>
        <translation>Model details</translation>
    </message>
    <message>
        <source>Data: %1</source>
        <translation>Data: %1</translation>
    </message>
    <message>
        <source>Data folder</source>
        <translation>Data folder</translation>
    </message>
    <message>
        <source>Model load progress</source>
        <translation>Model load progress</translation>
    </message>
    <message numerus="yes">
        <source>  ·  +%n other model(s)</source>
        <translation>
            <numerusform>  ·  +%n other model</numerusform>
            <numerusform>  ·  +%n other models</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>StoreHealth</name>
    <message>
        <source>another program is using the chat history file</source>
        <translation>another program is using the chat history file</translation>
    </message>
    <message>
        <source>the disk or the file is read-only</source>
        <translation>the disk or the file is read-only</translation>
    </message>
    <message>
        <source>the disk is full</source>
        <translation>the disk is full</translation>
    </message>
    <message>
        <source>the disk reported an error</source>
        <translation>the disk reported an error</translation>
    </message>
    <message>
        <source>the file is damaged</source>
        <translation>the file is damaged</translation>
    </message>
    <message>
        <source>the file or its folder cannot be opened</source>
        <translation>the file or its folder cannot be opened</translation>
    </message>
    <message>
        <source>it was written by a newer version of PagedChat</source>
        <translation>it was written by a newer version of PagedChat</translation>
    </message>
    <message>
        <source>an unexpected error occurred</source>
        <translation>an unexpected error occurred</translation>
    </message>
    <message>
        <source>The chat history could not be saved: %1.</source>
        <translation>The chat history could not be saved: %1.</translation>
    </message>
    <message>
        <source>The chat history could not be read: %1.</source>
        <translation>The chat history could not be read: %1.</translation>
    </message>
    <message>
        <source>PagedChat keeps what you wrote and tries again; nothing is lost while it stays open.</source>
        <translation>PagedChat keeps what you wrote and tries again; nothing is lost while it stays open.</translation>
    </message>
    <message>
        <source>The chat history file was damaged and could not be read. It was kept as %1; PagedChat started a new, empty chat history.</source>
        <translation>The chat history file was damaged and could not be read. It was kept as %1; PagedChat started a new, empty chat history.</translation>
    </message>
    <message>
        <source>The chat history can only be read: the disk or the file cannot be written. Your conversations are all here, but new messages cannot be sent or saved until it can be written again; PagedChat checks every few seconds.</source>
        <translation>The chat history can only be read: the disk or the file cannot be written. Your conversations are all here, but new messages cannot be sent or saved until it can be written again; PagedChat checks every few seconds.</translation>
    </message>
    <message>
        <source>PagedChat tries again.</source>
        <translation>PagedChat tries again.</translation>
    </message>
    <message>
        <source>permission denied</source>
        <translation>permission denied</translation>
    </message>
    <message>
        <source>The chat history could not be opened: %1.</source>
        <translation>The chat history could not be opened: %1.</translation>
    </message>
    <message>
        <source>The chat history could not be opened.</source>
        <translation>The chat history could not be opened.</translation>
    </message>
</context>
<context>
    <name>ToolChoice</name>
    <message>
        <source>This pane must call a tool, and none is offered now (Settings → Tools, or the pane&apos;s servers), or none has parameters the model can be held to.</source>
        <translation>This pane must call a tool, and none is offered now (Settings → Tools, or the pane&apos;s servers), or none has parameters the model can be held to.</translation>
    </message>
    <message>
        <source>This pane must call the tool %1, which is not offered now (or whose parameters the model cannot be held to).</source>
        <translation>This pane must call the tool %1, which is not offered now (or whose parameters the model cannot be held to).</translation>
    </message>
</context>
<context>
    <name>ToolHost</name>
    <message>
        <source>No file was named.</source>
        <translation>No file was named.</translation>
    </message>
    <message>
        <source>%1 is too large for a servers file.</source>
        <translation>%1 is too large for a servers file.</translation>
    </message>
    <message>
        <source>Cannot read %1: %2</source>
        <translation>Cannot read %1: %2</translation>
    </message>
    <message>
        <source>%1 is empty.</source>
        <translation>%1 is empty.</translation>
    </message>
    <message>
        <source>%1 in server &quot;%2&quot; says it is kept in the keychain, but nothing is kept for it: type the value again.</source>
        <translation>%1 in server &quot;%2&quot; says it is kept in the keychain, but nothing is kept for it: type the value again.</translation>
    </message>
    <message>
        <source>The servers&apos; env and headers are kept in pagedchat.ini: the keychain cannot be used (%1).</source>
        <translation>The servers&apos; env and headers are kept in pagedchat.ini: the keychain cannot be used (%1).</translation>
    </message>
    <message>
        <source>nothing is kept in the keychain for it</source>
        <translation>nothing is kept in the keychain for it</translation>
    </message>
    <message>
        <source>its env and headers could not be read from the keychain: %1</source>
        <translation>its env and headers could not be read from the keychain: %1</translation>
    </message>
</context>
<context>
    <name>ToolsPage</name>
    <message>
        <source>Tools</source>
        <translation>Tools</translation>
    </message>
    <message>
        <source>MCP servers give models tools. Paste an &quot;mcpServers&quot; document (as in claude_desktop_config.json) or read one from a file. Each call is shown in the chat and runs only once you allow it.</source>
        <translation>MCP servers give models tools. Paste an &quot;mcpServers&quot; document (as in claude_desktop_config.json) or read one from a file. Each call is shown in the chat and runs only once you allow it.</translation>
    </message>
    <message>
        <source>MCP servers document (JSON)</source>
        <translation>MCP servers document (JSON)</translation>
    </message>
    <message>
        <source>Apply</source>
        <translation>Apply</translation>
    </message>
    <message>
        <source>Apply the MCP servers document</source>
        <translation>Apply the MCP servers document</translation>
    </message>
    <message>
        <source>File to read the servers from</source>
        <translation>File to read the servers from</translation>
    </message>
    <message>
        <source>Read file</source>
        <translation>Read file</translation>
    </message>
    <message>
        <source>Read the servers from the file</source>
        <translation>Read the servers from the file</translation>
    </message>
    <message numerus="yes">
        <source>%1: ready, %n tool(s)</source>
        <translation>
            <numerusform>%1: ready, %n tool</numerusform>
            <numerusform>%1: ready, %n tools</numerusform>
        </translation>
    </message>
    <message>
        <source>%1: starting…</source>
        <translation>%1: starting…</translation>
    </message>
    <message>
        <source>%1: failed: %2</source>
        <translation>%1: failed: %2</translation>
    </message>
    <message>
        <source>Tool calls per message, at most</source>
        <translation>Tool calls per message, at most</translation>
    </message>
    <message>
        <source>The values of &quot;env&quot; and &quot;headers&quot; (tokens, keys) go to the system keychain; the document shows &quot;(in the keychain)&quot; in their place, which keeps them when you apply it again.</source>
        <translation>The values of &quot;env&quot; and &quot;headers&quot; (tokens, keys) go to the system keychain; the document shows &quot;(in the keychain)&quot; in their place, which keeps them when you apply it again.</translation>
    </message>
    <message numerus="yes">
        <source>Ask again for every tool (%n always allowed)</source>
        <translation>
            <numerusform>Ask again for every tool (%n always allowed)</numerusform>
            <numerusform>Ask again for every tool (%n always allowed)</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>UnsavedQuitDialog</name>
    <message>
        <source>Quit without saving?</source>
        <translation>Quit without saving?</translation>
    </message>
    <message>
        <source>Keep PagedChat open</source>
        <translation>Keep PagedChat open</translation>
    </message>
    <message>
        <source>Quit anyway</source>
        <translation>Quit anyway</translation>
    </message>
    <message>
        <source>Some of your changes (a reply, a new title, a pin) are not saved in the chat history yet. If PagedChat quits now, they are lost; while it stays open, it keeps trying to save them.</source>
        <translation>Some of your changes (a reply, a new title, a pin) are not saved in the chat history yet. If PagedChat quits now, they are lost; while it stays open, it keeps trying to save them.</translation>
    </message>
</context>
<context>
    <name>main</name>
    <message>
        <source>PagedChat could not open its chat data.</source>
        <translation>PagedChat could not open its chat data.</translation>
    </message>
    <message>
        <source>Check that folder, or start PagedChat with --data-dir DIR to use another one.</source>
        <translation>Check that folder, or start PagedChat with --data-dir DIR to use another one.</translation>
    </message>
    <message>
        <source>Open it with the newer PagedChat that wrote it; this version leaves the file as it is. To start this version with another, empty history, start it with --data-dir DIR.</source>
        <translation>Open it with the newer PagedChat that wrote it; this version leaves the file as it is. To start this version with another, empty history, start it with --data-dir DIR.</translation>
    </message>
</context>
</TS>
